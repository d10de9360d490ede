package config

import (
	"strings"
	"testing"
	"time"
)

// job.slots defaults to 1 (standalone) with the group timeouts' defaults;
// Flink's sink.parallelism sets it; job.slots above 1 with job.coordinator
// file is refused naming both keys; job.instance needs group mode; out of
// range counts are refused.
func TestJobSlots(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, minimal, nil, nil, NeedRun)
	if c.Job.Slots != 1 || c.GroupMode() || c.Kafka.SessionTimeout != 45*time.Second || c.Kafka.RebalanceTimeout != time.Minute {
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
	_, err = load(t, merge(minimal, "job: {instance: m1}\n"), nil, nil, NeedRun)
	keyError(t, err, "job.instance")
}
