package kafka

import (
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// sweepingSink is a Sink with sweep counters, as *loader.Loader.
type sweepingSink struct {
	nopSink
	stats *loader.SweepStats
}

func (s sweepingSink) SweepStats() *loader.SweepStats { return s.stats }

// The Connector's Metrics read the zombie sweep counters of a Sink that has
// them (doris_sink_zombie_txns_aborted_total), 0 for one that has none.
func TestMetricsReadTheSinksSweepCounters(t *testing.T) {
	t.Parallel()
	cfg := Config{Brokers: []string{"127.0.0.1:1"}, Topic: "t"}
	stats := &loader.SweepStats{}
	c, err := New(cfg, sweepingSink{stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	defer c.adminCl.Close()
	stats.Aborted.Add(3)
	stats.Failed.Add(1)
	if got, fails := c.Metrics().ZombieTxnsAborted(), c.Metrics().ZombieTxnAbortFailures(); got != 3 || fails != 1 {
		t.Errorf("ZombieTxnsAborted, ZombieTxnAbortFailures = %d, %d; want 3, 1", got, fails)
	}
	plain, err := New(cfg, nopSink{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.adminCl.Close()
	if got := plain.Metrics().ZombieTxnsAborted(); got != 0 {
		t.Errorf("ZombieTxnsAborted of a sink without sweeps = %d, want 0", got)
	}
}
