package config

import (
	"strings"
	"testing"
	"time"
)

// job.slots defaults to 1 (standalone) with the group timeouts' defaults;
// Flink's sink.parallelism sets it; job.slots above 1 with job.coordinator
// file is refused naming both keys; the default config (job.coordinator
// kafka) runs through the group path at job.slots 1 too, with job.instance
// accepted; job.instance with the standalone file path is refused; out of
// range counts are refused.
func TestJobSlots(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, minimal, nil, nil, NeedRun)
	if c.Job.Slots != 1 || !c.GroupMode() || c.Kafka.SessionTimeout != 45*time.Second || c.Kafka.RebalanceTimeout != time.Minute {
		t.Errorf("defaults: slots %d, session %v, rebalance %v; want 1, 45s, 1m", c.Job.Slots, c.Kafka.SessionTimeout, c.Kafka.RebalanceTimeout)
	}
	c = mustLoad(t, merge(minimal, "job: {slots: 4, instance: m1}\nkafka: {session_timeout: 10s, rebalance_timeout: 20s}\n"), nil, nil, NeedRun)
	if c.Job.Slots != 4 || !c.GroupMode() || c.Job.Instance != "m1" || c.Kafka.SessionTimeout != 10*time.Second ||
		c.Kafka.RebalanceTimeout != 20*time.Second {
		t.Errorf("group config: %+v %+v", c.Job, c.Kafka)
	}
	if c := mustLoad(t, merge(minimal, "sink.parallelism: 3\n"), nil, nil, NeedRun); c.Job.Slots != 3 {
		t.Errorf("sink.parallelism 3: job.slots %d, want 3", c.Job.Slots)
	}
	_, err := load(t, merge(minimal, "job: {slots: 2, coordinator: file}\n"), nil, nil, NeedRun)
	ke := keyError(t, err, "job.slots")
	if !strings.Contains(ke.Allowed, "job.coordinator") {
		t.Errorf("file + slots: %v, want the error to name job.coordinator", err)
	}
	for _, y := range []string{"job: {slots: 0}\n", "job: {slots: 1001}\n"} {
		_, err := load(t, merge(minimal, y), nil, nil, NeedRun)
		keyError(t, err, "job.slots")
	}
	if c := mustLoad(t, merge(minimal, "job: {instance: m1}\n"), nil, nil, NeedRun); c.Job.Instance != "m1" || !c.GroupMode() {
		t.Errorf("job.slots 1, job.instance m1: instance %q group path %v, want m1 through the group path", c.Job.Instance, c.GroupMode())
	}
	if c := mustLoad(t, merge(minimal, "job: {coordinator: file}\n"), nil, nil, NeedRun); c.GroupMode() {
		t.Error("job.coordinator file, job.slots 1: group path, want standalone")
	}
	_, err = load(t, merge(minimal, "job: {instance: m1, coordinator: file}\n"), nil, nil, NeedRun)
	keyError(t, err, "job.instance")
}

// kafka.session_timeout and kafka.rebalance_timeout under 1s (or negative)
// are refused naming the key (a group member could not heartbeat or hand
// over in time); exactly 1s is accepted.
func TestGroupTimeoutsUnderOneSecondRefused(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"session_timeout", "rebalance_timeout"} {
		for _, v := range []string{"999ms", "500ms", "1ms", "-1s"} {
			_, err := load(t, merge(minimal, "job: {slots: 2}\nkafka: {"+key+": "+v+"}\n"), nil, nil, NeedRun)
			ke := keyError(t, err, "kafka."+key)
			if !strings.Contains(ke.Allowed, "at least 1s") {
				t.Errorf("kafka.%s %s: %v, want the error to say at least 1s", key, v, err)
			}
		}
		c := mustLoad(t, merge(minimal, "job: {slots: 2}\nkafka: {"+key+": 1s}\n"), nil, nil, NeedRun)
		if got := map[string]time.Duration{"session_timeout": c.Kafka.SessionTimeout, "rebalance_timeout": c.Kafka.RebalanceTimeout}[key]; got != time.Second {
			t.Errorf("kafka.%s 1s: loaded %v, want 1s", key, got)
		}
	}
}
