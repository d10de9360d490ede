package coordlog

// Names derived from the job name (job.name, [A-Za-z0-9_-], validated by the
// label package) and the writer scope ("0" standalone). They are part of the
// operator contract (docs/operations.md): changing them orphans every
// existing job's decisions.

// StateTopicPrefix starts the name of every job's state topic.
const StateTopicPrefix = "doris-sink.state."

// StateTopic returns the compacted state topic of job:
// "doris-sink.state.<job>".
func StateTopic(job string) string { return StateTopicPrefix + job }

// TransactionalID returns the Kafka transactional id of the writer scope of
// job: "doris-sink.<job>.<scope>". Every process opened with it fences the
// previous one.
func TransactionalID(job, scope string) string { return "doris-sink." + job + "." + scope }

// RecordKey returns the state record key of the writer scope of job:
// "<job>/<scope>".
func RecordKey(job, scope string) string { return job + "/" + scope }

// OffsetMetadata is the consumer-group offset metadata committed with the
// positions of checkpoint id: "doris-sink:chk=<id>".
func OffsetMetadata(id uint64) string { return "doris-sink:chk=" + uitoa(id) }

func uitoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

// SlotTopicPrefix starts the name of every group-mode job's slot topic.
const SlotTopicPrefix = "doris-sink.slots."

// SlotTopic returns the slot topic of job: "doris-sink.slots.<job>". It
// holds no records: its partitions are the job's writer slots, and the
// members of the job's consumer group (kafka.group) subscribe to it, so the
// group's cooperative-sticky assignment of its partitions is the
// assignment of slots to members. Its partition count is the job's slot
// count (job.slots).
func SlotTopic(job string) string { return SlotTopicPrefix + job }

// SlotScope returns the writer scope of slot: its decimal number. Slot 0's
// scope is DefaultScope, the standalone writer's.
func SlotScope(slot int) string { return uitoa(uint64(slot)) }

// SlotOf returns the writer slot, in [0, slots), that owns partition of
// topic: (FNV-1a 32 of the topic name + partition) mod slots. It depends on
// nothing but its arguments, so every member, operator command and
// restart agrees on it; the topic's hash spreads partition 0 of several
// topics over different slots. slots < 2 maps everything to slot 0.
func SlotOf(topic string, partition int32, slots int) int {
	if slots < 2 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(topic); i++ {
		h ^= uint32(topic[i])
		h *= 16777619
	}
	return int((uint64(h) + uint64(uint32(partition))) % uint64(slots))
}
