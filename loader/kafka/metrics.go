package kafka

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Metrics are the Connector's counters. cmd/ exports them (for example as
// Prometheus CounterFuncs/GaugeFuncs); this package has no Prometheus
// dependency. All fields are safe for concurrent reads. The zero value is
// ready to use.
type Metrics struct {
	// Records counts records consumed (rows, dead-lettered and skipped
	// tombstones); re-reads after a rewind count again.
	Records atomic.Int64
	// Bytes counts the value bytes of Records.
	Bytes atomic.Int64
	// Rows and RowBytes count rows handed to the loader.
	Rows     atomic.Int64
	RowBytes atomic.Int64
	// Checkpoints counts decided checkpoints; CheckpointFailures the failed
	// ones wherever they failed: at the barrier, while their rows streamed
	// (a Write), or in the background commit of a decided checkpoint (each
	// followed by a Recover and a rewind, unless Run stops for it).
	Checkpoints        atomic.Int64
	CheckpointFailures atomic.Int64
	// Recovers counts loader.Recover calls (the start included); failed
	// Recover attempts are counted by RecoverFailures.
	Recovers        atomic.Int64
	RecoverFailures atomic.Int64
	// DeadLettered counts records sent to the dead-letter topic.
	DeadLettered atomic.Int64
	// Tombstones counts debezium tombstones skipped.
	Tombstones atomic.Int64
	// FetchErrors counts per-partition fetch errors kgo reported (it retries
	// the retriable ones).
	FetchErrors atomic.Int64
	// GroupCommitFailures counts failed monitoring commits.
	GroupCommitFailures atomic.Int64

	mu  sync.Mutex
	lag map[int32]int64

	stall stallState
}

// Lag returns, per partition, the records between the last one consumed
// and the partition's high watermark at the last fetch.
func (m *Metrics) Lag() map[int32]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.lag)
}

func (m *Metrics) setLag(p int32, lag int64) {
	m.mu.Lock()
	if m.lag == nil {
		m.lag = map[int32]int64{}
	}
	m.lag[p] = max(lag, 0)
	m.mu.Unlock()
}

// CheckpointStats describe one checkpoint attempt (WithOnCheckpoint).
type CheckpointStats struct {
	// Start and End are the positions the checkpoint covers.
	Start, End Position
	// Records consumed, Rows written and their RowBytes.
	Records, Rows, RowBytes int64
	// DeadLettered records were sent to the dead-letter topic and are
	// skipped by this checkpoint; Tombstones were skipped.
	DeadLettered, Tombstones int64
	// Err is the loader's error, nil when the checkpoint was decided.
	Err error
}
