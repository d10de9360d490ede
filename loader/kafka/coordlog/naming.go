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
