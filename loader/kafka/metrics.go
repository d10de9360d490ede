package kafka

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/doris-sink/doris-sink/loader"
)

// CountSweeps makes ZombieTxnsAborted and ZombieTxnAbortFailures read s,
// the sink's sweep counters (loader.Loader.SweepStats). New calls it for a
// Sink that has SweepStats.
func (m *Metrics) CountSweeps(s *loader.SweepStats) { m.sweeps.Store(s) }

// ZombieTxnsAborted counts the txns the sink's zombie sweeps aborted
// (loader.SweepStats.Aborted): running txns of the job's scope at or below
// its last decided checkpoint that its store does not decide, such as a
// fenced process's late precommit. 0 for a Sink without sweeps.
func (m *Metrics) ZombieTxnsAborted() int64 {
	if s := m.sweeps.Load(); s != nil {
		return s.Aborted.Load()
	}
	return 0
}

// ZombieTxnAbortFailures counts the zombie txns whose abort failed (the
// next sweep retries them) or that someone else committed
// (loader.SweepStats.Failed). 0 for a Sink without sweeps.
func (m *Metrics) ZombieTxnAbortFailures() int64 {
	if s := m.sweeps.Load(); s != nil {
		return s.Failed.Load()
	}
	return 0
}

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
	// DeadLettered counts records sent to the dead-letter topic (with a
	// DeadLetterStager: staged for their checkpoint's decision); re-reads
	// after a rewind count again, the dead-letter topic holds each once.
	DeadLettered atomic.Int64
	// Tombstones counts debezium tombstones skipped.
	Tombstones atomic.Int64
	// UnknownFields counts top-level JSON fields of rows that are not
	// columns of the table (WithTableColumns): Doris ignores them, so their
	// data is not loaded. Re-reads after a rewind count again.
	UnknownFields atomic.Int64
	// TableChanges counts the changes schema evolution made to the table
	// (a created table, an ALTER TABLE): the caller's TableEvolver.Evidence
	// adds to it.
	TableChanges atomic.Int64
	// FetchErrors counts per-partition fetch errors kgo reported (it retries
	// the retriable ones).
	FetchErrors atomic.Int64
	// GroupCommitFailures counts failed monitoring commits.
	GroupCommitFailures atomic.Int64

	// sweeps are the counters of the sink's zombie sweeps (a Sink with
	// SweepStats, *loader.Loader), nil for another Sink.
	sweeps atomic.Pointer[loader.SweepStats]

	mu    sync.Mutex
	parts map[topicPartition]*partitionPos

	stall stallState
	dl    deadLetterCounts
}

// PartitionPosition is what the connector knows about one partition's
// positions. An offset is -1 until it is known.
type PartitionPosition struct {
	// HighWatermark is the partition's high watermark at the last fetch
	// that returned records.
	HighWatermark int64
	// Read is the next offset to read: one past the last record consumed
	// (it moves back to Loaded on a rewind).
	Read int64
	// Loaded is the end offset of the last decided checkpoint (the next
	// offset a restart reads), or the start position before the first
	// decision. Records below it are in Doris or decided to be (the
	// decision's commit follows right after it).
	Loaded int64
}

// partitionPos is the mutable form of PartitionPosition.
type partitionPos struct{ hw, read, loaded int64 }

// topicPartition names one partition of one topic.
type topicPartition struct {
	topic string
	part  int32
}

// Lag returns, per partition, the records between the last one consumed
// and the partition's high watermark at the last fetch: how far reading
// is behind, not loading (see LoadedLag). With several source topics it
// covers the first topic in name order; TopicLag covers them all.
func (m *Metrics) Lag() map[int32]int64 {
	return firstTopic(m.TopicLag())
}

// LoadedLag returns, per partition, the records between the loaded
// position (PartitionPosition.Loaded) and the partition's high watermark
// at the last fetch: the records a crash now would leave to load. It
// grows while nothing is decided, even if records are read. With several
// source topics it covers the first topic in name order; TopicLoadedLag
// covers them all.
func (m *Metrics) LoadedLag() map[int32]int64 {
	return firstTopic(m.TopicLoadedLag())
}

// TopicLag is Lag per topic: topic → partition → records.
func (m *Metrics) TopicLag() map[string]map[int32]int64 {
	return m.lagBehind(func(pp *partitionPos) int64 { return pp.read })
}

// TopicLoadedLag is LoadedLag per topic: topic → partition → records.
func (m *Metrics) TopicLoadedLag() map[string]map[int32]int64 {
	return m.lagBehind(func(pp *partitionPos) int64 { return pp.loaded })
}

// lagBehind is, per partition whose high watermark and position are known
// (≥ 0), the high watermark minus the position pos picks, never negative.
func (m *Metrics) lagBehind(pos func(*partitionPos) int64) map[string]map[int32]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[int32]int64{}
	for tp, pp := range m.parts {
		if at := pos(pp); pp.hw >= 0 && at >= 0 {
			if out[tp.topic] == nil {
				out[tp.topic] = map[int32]int64{}
			}
			out[tp.topic][tp.part] = max(pp.hw-at, 0)
		}
	}
	return out
}

// Positions returns what the connector knows about each partition. With
// several source topics it covers the first topic in name order;
// TopicPositions covers them all.
func (m *Metrics) Positions() map[int32]PartitionPosition {
	out := firstTopic(m.TopicPositions())
	if out == nil {
		out = map[int32]PartitionPosition{}
	}
	return out
}

// TopicPositions returns what the connector knows about each partition of
// each source topic: topic → partition → positions.
func (m *Metrics) TopicPositions() map[string]map[int32]PartitionPosition {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]map[int32]PartitionPosition{}
	for tp, pp := range m.parts {
		if out[tp.topic] == nil {
			out[tp.topic] = map[int32]PartitionPosition{}
		}
		out[tp.topic][tp.part] = PartitionPosition{HighWatermark: pp.hw, Read: pp.read, Loaded: pp.loaded}
	}
	return out
}

// firstTopic returns the entry of the first topic of m in name order
// (an empty map when m is empty).
func firstTopic[V any](m map[string]map[int32]V) map[int32]V {
	if len(m) == 0 {
		return map[int32]V{}
	}
	return m[slices.Min(slices.Collect(maps.Keys(m)))]
}

// part returns topic t partition p's positions, creating them unknown;
// m.mu is held.
func (m *Metrics) part(t string, p int32) *partitionPos {
	if m.parts == nil {
		m.parts = map[topicPartition]*partitionPos{}
	}
	tp := topicPartition{t, p}
	pp := m.parts[tp]
	if pp == nil {
		pp = &partitionPos{hw: -1, read: -1, loaded: -1}
		m.parts[tp] = pp
	}
	return pp
}

// setHighWatermark records topic t partition p's high watermark at its
// last fetch.
func (m *Metrics) setHighWatermark(t string, p int32, hw int64) {
	m.mu.Lock()
	m.part(t, p).hw = hw
	m.mu.Unlock()
}

// setRead records that topic t partition p's records before next were
// handled (converted and written, or skipped).
func (m *Metrics) setRead(t string, p int32, next int64) {
	m.mu.Lock()
	m.part(t, p).read = next
	m.mu.Unlock()
}

// setLoaded records a decided checkpoint's end offsets of topic t.
func (m *Metrics) setLoaded(t string, offsets map[int32]int64) {
	m.mu.Lock()
	for p, o := range offsets {
		m.part(t, p).loaded = o
	}
	m.mu.Unlock()
}

// setRewound records that consumption of topic t (re)starts at offsets,
// the loaded position: both Read and Loaded move there.
func (m *Metrics) setRewound(t string, offsets map[int32]int64) {
	m.mu.Lock()
	for p, o := range offsets {
		pp := m.part(t, p)
		pp.read, pp.loaded = o, o
	}
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
