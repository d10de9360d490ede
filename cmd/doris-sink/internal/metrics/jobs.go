package metrics

import (
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// job is what the process knows about one table's job: its connector's
// counters (RegisterConnector) and its observed store (WrapStore), joined
// by table.
type job struct {
	table string
	topic string
	km    *kafka.Metrics // nil until RegisterConnector
	store *ObservedStore // nil until WrapStore
	// positions reads the connector's positions per topic
	// (km.TopicPositions; tests replace it).
	positions func() map[string]map[int32]kafka.PartitionPosition
	// slot is the job's slot in group mode ("" standalone).
	slot string
}

// updateJob calls set on the job of table, creating it, under m.jmu.
func (m *Metrics) updateJob(table string, set func(*job)) {
	m.jmu.Lock()
	defer m.jmu.Unlock()
	for _, j := range m.jobs {
		if j.table == table {
			set(j)
			return
		}
	}
	j := &job{table: table}
	set(j)
	m.jobs = append(m.jobs, j)
}

// snapshotJobs returns copies of the registered jobs.
func (m *Metrics) snapshotJobs() []job {
	m.jmu.Lock()
	defer m.jmu.Unlock()
	out := make([]job, len(m.jobs))
	for i, j := range m.jobs {
		out[i] = *j
	}
	return out
}

// positions returns the connector positions of table's job (none before
// RegisterConnector).
func (m *Metrics) positions(table string) map[string]map[int32]kafka.PartitionPosition {
	m.jmu.Lock()
	var f func() map[string]map[int32]kafka.PartitionPosition
	for _, j := range m.jobs {
		if j.table == table {
			f = j.positions
		}
	}
	m.jmu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// loadedLag is HighWatermark − Loaded per topic partition where both are
// known.
func loadedLag(pos map[string]map[int32]kafka.PartitionPosition) map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	for t, parts := range pos {
		for p, pp := range parts {
			if pp.HighWatermark >= 0 && pp.Loaded >= 0 {
				if out[t] == nil {
					out[t] = map[int32]int64{}
				}
				out[t][p] = max(pp.HighWatermark-pp.Loaded, 0)
			}
		}
	}
	return out
}
