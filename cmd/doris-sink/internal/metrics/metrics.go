// Package metrics holds the Prometheus metrics of `doris-sink run` in a
// private registry (no global state) and serves them with the health
// endpoints. The loader is observed from outside: Doris calls through
// WrapDoris, store writes through WrapStore, so the loader stays free of
// metrics code.
package metrics

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Stages of the exactly-once cycle (docs/design.md §2) timed in
// doris_sink_stage_seconds.
const (
	// StageBegin is the BE's begin_txn time (LoadResult.BeginTxnTimeMs).
	StageBegin = "begin"
	// StageStream is the whole Stream Load call: body streamed until Doris
	// answers (the precommit for 2PC).
	StageStream = "stream"
	// StagePrecommit is the BE's commit/precommit time
	// (LoadResult.CommitAndPublishTimeMs).
	StagePrecommit = "precommit"
	// StageAnnounce is a store write that only announces a label.
	StageAnnounce = "announce"
	// StageDecide is the store write deciding a checkpoint (fsync'd).
	StageDecide = "decide"
	// StageCommit is one 2PC commit request.
	StageCommit = "commit"
	// StageAbort is one 2PC abort request.
	StageAbort = "abort"
)

// Txn outcomes counted in doris_sink_txns_total.
const (
	TxnPrecommitted    = "precommitted"
	TxnLoaded          = "loaded" // non-2PC (at-least-once) load succeeded
	TxnLoadFailed      = "load_failed"
	TxnCommitted       = "committed"
	TxnCommitFailed    = "commit_failed"
	TxnCommitAmbiguous = "commit_ambiguous"
	TxnAborted         = "aborted"
	TxnAbortFailed     = "abort_failed"
)

// Metrics is the metric set of one process. Create it with New; its
// methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	rows        *prometheus.CounterVec
	rowsCommit  *prometheus.CounterVec
	bytes       *prometheus.CounterVec
	checkpoints *prometheus.CounterVec
	txns        *prometheus.CounterVec
	stages      *prometheus.HistogramVec

	ready atomic.Bool

	// now is the clock of ages and stall durations (time.Now; tests
	// replace it); started is when New ran.
	now     func() time.Time
	started time.Time
	pid     int

	jmu  sync.Mutex
	jobs []*job // by registration order; see jobFor

	// group is set by NewGroup (group mode): the Doris and store series
	// carry a slot label and the slots collector exports the slot jobs.
	group *slots
	// membership is the group-mode member's consumer-group membership
	// (group.go).
	membership *membership
}

// New returns a Metrics with its own registry (Go and process collectors
// included).
func New() *Metrics { return newMetrics(nil) }

// NewGroup returns the Metrics of a group-mode member of a job of n
// slots reading topic into table ("db.table"): the series of a slot job
// carry a "slot" label (the Doris and store series too), the slot jobs
// are exported by one collector reading them at scrape time (AttachSlot,
// DetachSlot), and doris_sink_slot_owned reads the member's ownership of
// every slot (WatchOwnership).
func NewGroup(n int, topic, table string) *Metrics {
	return newMetrics(newSlots(n, topic, table))
}

func newMetrics(g *slots) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), now: time.Now, pid: os.Getpid(), group: g}
	m.started = m.now()
	// lbl are the label names of the Doris and store series: a slot label
	// after the table in group mode.
	lbl := func(extra ...string) []string {
		if g != nil {
			return append([]string{"table", "slot"}, extra...)
		}
		return append([]string{"table"}, extra...)
	}
	m.rows = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "doris_sink_rows_precommitted_total",
		Help: "Rows Doris loaded into precommitted (or, at-least-once, committed) Stream Loads, by table.",
	}, lbl())
	m.rowsCommit = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "doris_sink_rows_committed_total",
		Help: "Rows of Stream Load transactions this process committed, by table.",
	}, lbl())
	m.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "doris_sink_bytes_loaded_total",
		Help: "Stream Load body bytes Doris accepted, by table.",
	}, lbl())
	m.checkpoints = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "doris_sink_checkpoints_decided_total",
		Help: "Checkpoints whose decision was written to the store, by table.",
	}, lbl())
	m.txns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "doris_sink_txns_total",
		Help: "Stream Load transaction outcomes by table and kind (precommitted, loaded, load_failed, committed, commit_failed, commit_ambiguous, aborted, abort_failed).",
	}, lbl("kind"))
	m.stages = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "doris_sink_stage_seconds",
		Help:    "Duration of the stages of the exactly-once cycle: begin, stream, precommit, announce, decide, commit, abort.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, lbl("stage"))
	m.membership = newMembership(m.reg)
	m.reg.MustRegister(m.rows, m.rowsCommit, m.bytes, m.checkpoints, m.txns, m.stages,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if g != nil {
		g.m = m
		m.reg.MustRegister(g)
	}
	return m
}

// Registry returns the private registry (for tests and extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SetReady marks the process ready (/readyz answers 200): every loader has
// recovered (docs/design.md §2 invariant 4).
func (m *Metrics) SetReady(ready bool) { m.ready.Store(ready) }

// labels are the label values of a Doris or store series of table in the
// job of slot (ignored standalone), then extra.
func (m *Metrics) labels(table, slot string, extra ...string) []string {
	if m.group != nil {
		return append([]string{table, slot}, extra...)
	}
	return append([]string{table}, extra...)
}
