package config

import (
	"fmt"
	"time"
)

// GroupMode reports whether `run` joins the job's consumer group: with
// job.coordinator kafka (job.slots 1 too: the one slot's owner writes,
// every other process of the config is a ready standby) or job.slots ≥ 2.
// Every process of the config then joins kafka.group and runs the writer
// slots the group assigns it. job.coordinator file with job.slots 1 is
// the standalone path (a file store cannot be shared between processes).
func (c *Config) GroupMode() bool { return c.Job.Slots > 1 || c.Job.Coordinator == CoordinatorKafka }

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
	if msg := InstanceIDProblem(c.Job.Instance); msg != "" {
		bad("job.instance", c.Job.Instance, msg)
	}
	if c.Job.Instance != "" && c.Job.Slots < 2 && c.Job.Coordinator == CoordinatorFile {
		bad("job.instance", c.Job.Instance, "static membership is for the consumer group, and job.coordinator file with "+
			"job.slots 1 runs standalone (no group): set job.coordinator: kafka, or leave job.instance unset")
	}
	if c.Kafka.SessionTimeout < 0 || c.Kafka.SessionTimeout > 0 && c.Kafka.SessionTimeout < time.Second {
		bad("kafka.session_timeout", c.Kafka.SessionTimeout, "want a duration of at least 1s")
	}
	if c.Kafka.RebalanceTimeout < 0 || c.Kafka.RebalanceTimeout > 0 && c.Kafka.RebalanceTimeout < time.Second {
		bad("kafka.rebalance_timeout", c.Kafka.RebalanceTimeout, "want a duration of at least 1s")
	}
}

// maxInstanceID is the longest group.instance.id Kafka accepts.
const maxInstanceID = 249

// InstanceIDProblem says why id cannot be a Kafka group.instance.id, ""
// when it can (or is unset): job.instance, and the instance id `run`
// keeps in job.data_dir when job.instance is unset. Kafka's JoinGroupRequest.validateGroupInstanceId
// allows [a-zA-Z0-9._-], at most 249 characters, not "." or "..": an id it
// refuses would fail every join, so it is refused at load instead.
func InstanceIDProblem(id string) string {
	if id == "" {
		return ""
	}
	if id == "." || id == ".." {
		return `"." and ".." are not allowed as a Kafka group.instance.id`
	}
	if len(id) > maxInstanceID {
		return fmt.Sprintf("at most %d characters (a Kafka group.instance.id), got %d", maxInstanceID, len(id))
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '.', b == '_', b == '-':
		default:
			return fmt.Sprintf("character %q at %d: a Kafka group.instance.id allows only [a-zA-Z0-9._-]", b, i)
		}
	}
	return ""
}
