package config

import (
	"testing"
	"time"
)

// metrics.log_interval: 60s by default, 0 (a bare YAML integer too)
// disables the progress line, below 1s is refused naming the key.
func TestMetricsLogInterval(t *testing.T) {
	t.Parallel()
	if c := mustLoad(t, "job: {name: j}\n", nil, nil, NeedJob); c.Metrics.LogInterval != time.Minute {
		t.Errorf("default log_interval %v, want 1m", c.Metrics.LogInterval)
	}
	for _, y := range []string{"metrics: {log_interval: 0}", "metrics: {log_interval: 0s}"} {
		if c := mustLoad(t, "job: {name: j}\n"+y+"\n", nil, nil, NeedJob); c.Metrics.LogInterval != 0 {
			t.Errorf("%s: log_interval %v, want 0", y, c.Metrics.LogInterval)
		}
	}
	if c := mustLoad(t, "job: {name: j}\n", []string{EnvPrefix + "METRICS__LOG_INTERVAL=15s"}, nil, NeedJob); c.Metrics.LogInterval != 15*time.Second {
		t.Errorf("from the environment: %v, want 15s", c.Metrics.LogInterval)
	}
	_, err := load(t, "job: {name: j}\nmetrics: {log_interval: 10ms}\n", nil, nil, NeedJob)
	keyError(t, err, "metrics.log_interval")
}
