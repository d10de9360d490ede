package config

import (
	"fmt"
	"time"
)

// GroupMode reports whether the job runs in group mode (job.slots ≥ 2):
// every process of the config joins kafka.group and runs the writer slots
// the group assigns it.
func (c *Config) GroupMode() bool { return c.Job.Slots > 1 }

// SlotCount is job.slots, 1 for a Config built without Load (0).
func (c *Config) SlotCount() int { return max(c.Job.Slots, 1) }

// validateGroup checks job.slots, job.instance and the group timeouts.
func (c *Config) validateGroup(bad func(key string, v any, allowed string)) {
	if c.Job.Slots < 1 || c.Job.Slots > MaxSlots {
		bad("job.slots", c.Job.Slots, fmt.Sprintf("want an integer from 1 to %d", MaxSlots))
	}
	if c.Job.Slots > 1 && c.Job.Coordinator == CoordinatorFile {
		bad("job.slots", c.Job.Slots, "job.slots above 1 (group mode) needs job.coordinator: kafka, and job.coordinator is file: "+
			"a file store in job.data_dir cannot be shared by processes on several machines; set job.coordinator: kafka "+
			"(a file store is imported once) or job.slots: 1")
	}
	if c.Job.Instance != "" && c.Job.Slots < 2 {
		bad("job.instance", c.Job.Instance, "static membership is for group mode: set job.slots ≥ 2, or leave job.instance unset")
	}
	if c.Kafka.SessionTimeout < 0 || c.Kafka.SessionTimeout > 0 && c.Kafka.SessionTimeout < time.Second {
		bad("kafka.session_timeout", c.Kafka.SessionTimeout, "want a duration of at least 1s")
	}
	if c.Kafka.RebalanceTimeout < 0 || c.Kafka.RebalanceTimeout > 0 && c.Kafka.RebalanceTimeout < time.Second {
		bad("kafka.rebalance_timeout", c.Kafka.RebalanceTimeout, "want a duration of at least 1s")
	}
}
