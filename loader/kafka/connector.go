package kafka

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
)

var _ Sink = (*loader.Loader)(nil)

// Sink is what the Connector drives: *loader.Loader implements it. Every
// method has the contract of the Loader method of the same name; the
// Connector calls them from its Run goroutine only. CheckpointWith gets
// the checkpoint's dead-lettered record count; LastDecision names the
// checkpoint in the metadata of the monitoring group commit; CommitFailed
// wakes the Connector to recover at once when a background commit failed.
// SetStart gets the resolved first-start position after every Recover that
// returned nil, so that the first decision records where it starts;
// Healing tells a drain the decided end of a checkpoint being healed.
type Sink interface {
	Recover(ctx context.Context) (json.RawMessage, error)
	SetStart(raw json.RawMessage) error
	Healing() (id uint64, end json.RawMessage, ok bool)
	Write(ctx context.Context, row []byte) error
	CheckpointWith(ctx context.Context, end json.RawMessage, info loader.CheckpointInfo) error
	LastDecision() (id uint64, label string, committed bool)
	CommitFailed() <-chan struct{}
	Close(ctx context.Context) error
}

// Sweeper is a Sink that sweeps its scope's zombie txns (loader.Loader:
// Sweep, and SweepEvery its Config.SweepInterval). The Loader sweeps at
// its own checkpoint boundaries, which an idle source never reaches: a
// Connector with no record pending calls Sweep every SweepEvery, on its
// run goroutine between polls, so a fenced process's late precommit does
// not linger while the topic is quiet.
type Sweeper interface {
	Sweep(ctx context.Context) error
	SweepEvery() time.Duration
}

// TableSink is a Sink that loads several tables (loader.Loader): WriteTo
// appends row to the current checkpoint's load of table ("db.table" or a
// table of the sink's database). Config.Routing needs it.
type TableSink interface {
	Sink
	WriteTo(ctx context.Context, table string, row []byte) error
}

// KeySink is a Sink that routes rows to parallel sub-loads by key
// (loader.Loader, Config.SubLoads): the Connector passes each record's
// source partition, so the row goes to sub-load partition mod K and a
// partition's records (a key's versions) stay in one Stream Load, in
// order. A Sink without it gets Write and WriteTo. A wrapper that embeds a
// loader.Loader to hook Write must hook WriteKey (and WriteToKey) too: the
// Connector calls those when the Sink has them.
type KeySink interface {
	WriteKey(ctx context.Context, key uint64, row []byte) error
	WriteToKey(ctx context.Context, table string, key uint64, row []byte) error
}

// Connector reads Kafka topics (one, a list, or those a regex selects)
// into a Sink (docs/design.md §1, connector row); one checkpoint covers
// every partition of every topic. Create it with New, then call Run once. Drain and Metrics are safe
// to call from any goroutine.
type Connector struct {
	cfg     Config
	o       options
	sink    Sink
	conv    *Converter
	metrics *Metrics
	knobs   TestingKnobs

	adminCl *kgo.Client // metadata, list offsets, group commits
	adm     *kadm.Client

	ran       atomic.Bool
	drainCh   chan struct{}
	drainReq  atomic.Bool // set before drainCh is closed; read per record
	drainOnce sync.Once
	// drainTimer fires drainTimeout after Drain (nil: no bound); written
	// before drainCh is closed.
	drainTimer <-chan time.Time
	fence      *fence // WithFenceCheck's verdict

	// mu guards cl, base, decided, topics and tids, shared with the partition-refresh
	// goroutine and Decided.
	mu      sync.Mutex
	cl      *kgo.Client  // the consuming client (recreated on rewind)
	base    topicOffsets // where a partition starts when no position covers it
	decided *Position    // the last decided position known (nil: none)
	topics  []string     // the source topics read now, sorted (grows with TopicRegex)
	// tids are the topic IDs of the source topics the Connector reads
	// (recreated.go): a fetch or a lookup under another ID means the
	// topic was recreated.
	tids map[string]topicID

	// re is Config.TopicRegex compiled (nil: a list of topics).
	re *regexp.Regexp

	// Run goroutine state.
	next  topicOffsets // next offset to read per topic partition
	start Position     // start of the open checkpoint (last decided)
	// topicsC fires when the next look for new topics (TopicRegex) is due;
	// topicsDue is set when it fired and the look waits for the open
	// checkpoint to be decided.
	topicsC   <-chan time.Time
	topicsDue bool
	// sweepC fires when an idle sweep is due (the sink is a Sweeper and no
	// record is pending); sweepDue is set when it fired.
	sweepC   <-chan time.Time
	sweepDue bool
	pend     pending
	timerC   <-chan time.Time
	fired    bool
	// drainTo bounds reading while a failed drain checkpoint is re-read:
	// the next offsets consumed when Drain was called (nil otherwise).
	drainTo topicOffsets
	// inDrain is set once drain runs (backoff waits no longer end on
	// Drain).
	inDrain bool
	// fail is the current run of failures.
	fail failureRun
	// dlPartitions and dlMaxBytes are the dead-letter topic's partition
	// count and the largest dead letter it takes (read at start); dlLog
	// rate-limits the dead-letter warnings.
	dlPartitions int32
	dlMaxBytes   int64
	dlLog        deadLetterLog
	// check is the row pre-check (WithRowCheck with a dead-letter topic);
	// nil: off.
	check *rowCheck
	// bisect is a bisection of a range Doris refused (nil: none); refused
	// the records it found, dead-lettered whenever they are read again.
	bisect  *bisectState
	refused map[recKey]string
	// routedChecks are the routed tables' pre-checks
	// (WithRoutedRowCheck), built on first sight; nil value: off.
	routedChecks map[string]*rowCheck
	// routedFields is the routed tables' unknown-field watch
	// (WithRoutedTableColumns, fields_tables.go); nil: off.
	routedFields *routedFields
	// evo is the schema evolution state (evolve.go, evolve_tables.go).
	evo evoState
}

type pending struct {
	records, rows, rowBytes, deadLettered, tombstones int64
	// letters are the open checkpoint's dead letters, staged with its
	// decision (WithDeadLetterStager); letterBytes their size.
	letters     []*kgo.Record
	letterBytes int64
	// lastRow is the record of the last row written.
	lastRow recKey
}

// New validates cfg and returns a Connector that will drive sink (a
// *loader.Loader configured with LoaderFormat(cfg.Format) and
// RequiredProperties(cfg.Format)). It does not connect; Run does. The
// Connector owns sink from now on: Run closes it.
func New(cfg Config, sink Sink, opts ...Opt) (*Connector, error) {
	if sink == nil {
		return nil, errors.New("kafka connector: sink (loader) is nil")
	}
	if _, ok := sink.(TableSink); cfg.Routing.Enabled() && !ok {
		return nil, fmt.Errorf("kafka connector: routing.* needs a sink that loads several tables (a %T has no WriteTo)", sink)
	}
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	conv, err := NewConverter(ConvertConfig{Format: cfg.Format, Metadata: cfg.Metadata, Delete: cfg.Delete,
		Schemas: cfg.Schemas, Envelope: cfg.Envelope})
	if err != nil {
		return nil, fmt.Errorf("kafka connector config: %w", err)
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt.apply(&o)
	}
	if o.metrics == nil {
		o.metrics = &Metrics{}
	}
	// With routing the rows go to the routed tables, not to doris.table:
	// each is checked against its own columns (WithRoutedTableColumns).
	if o.columns != nil && !cfg.Routing.Enabled() && (o.evolver == nil || !o.evolver.AddsColumns()) {
		log, topic := o.logger, cmp.Or(cfg.Topic, strings.Join(cfg.Topics, ","), cfg.TopicRegex)
		conv.WatchFields(o.columns, &o.metrics.UnknownFields, func(name string) {
			log.Warn("JSON field is not a column of the table: Doris ignores it, its values are not loaded "+
				"(named once; every occurrence is counted in unknown_fields)", "field", name, "topic", topic)
		})
	}
	if cfg.DeadLetterTopic != "" && o.stager == nil && !cfg.DeadLetterAtLeastOnce {
		return nil, fmt.Errorf("kafka connector config: %w", ErrDeadLetterNeedsStager)
	}
	switch {
	case (o.tableEvolvers != nil || o.tableDeletes != nil) && !cfg.Routing.Enabled():
		return nil, errEvolversNeedRouting
	case o.evolver != nil && cfg.Routing.Enabled():
		return nil, errEvolverWithRouting
	case o.tableEvolvers != nil:
		conv.TrackSchemas()
		conv.WatchFields(nil, nil, nil) // each table's converter watches its own table's columns (forTable)
	}
	if o.evolver != nil {
		conv.TrackSchemas()
		if o.columns == nil || o.evolver.AddsColumns() {
			// The evolver names the columns; unknown fields are added, not warned about.
			conv.WatchFields(append([]string{}, o.columns...), &o.metrics.UnknownFields, nil)
		}
	}
	if ss, ok := sink.(interface{ SweepStats() *loader.SweepStats }); ok {
		o.metrics.CountSweeps(ss.SweepStats())
	}
	c := &Connector{cfg: cfg, o: o, sink: sink, conv: conv, metrics: o.metrics, drainCh: make(chan struct{}),
		fence: newFence(), dlLog: deadLetterLog{every: o.dlLogEvery}}
	if o.routedColumns != nil && cfg.Routing.Enabled() && o.tableEvolvers == nil {
		c.routedFields = &routedFields{columns: o.routedColumns, watches: map[string]*fieldWatch{}}
	}
	if c.re, err = cfg.topicRegexp(); err != nil {
		return nil, fmt.Errorf("kafka connector config: %w", err)
	}
	if o.knobs != nil {
		c.knobs = *o.knobs
	}
	if o.checkTable != nil && cfg.DeadLetterTopic != "" {
		var why string
		if c.check, why = newRowCheck(o.checkTable, o.checkProps, cfg.Format, cfg.Delete); c.check == nil {
			o.logger.Warn("rows are not pre-checked against the table: Doris alone decides which it refuses", "why", why)
		} else {
			o.logger.Info("rows are pre-checked against the table: those Doris would refuse are dead-lettered",
				"table", o.checkTable.Name, "strict_mode", c.check.strict)
		}
	}
	if o.evolver != nil {
		c.evo.main = &tableEvo{ev: o.evolver, conv: conv}
	}
	c.evo.newFor, c.evo.delFor = o.tableEvolvers, o.tableDeletes
	c.evo.perTable = o.tableEvolvers != nil || o.tableDeletes != nil
	c.adminCl, err = kgo.NewClient(c.baseOpts()...)
	if err != nil {
		return nil, fmt.Errorf("kafka connector: admin client: %w", err)
	}
	c.adm = kadm.NewClient(c.adminCl)
	return c, nil
}

// Metrics returns the Connector's counters.
func (c *Connector) Metrics() *Metrics { return c.metrics }

// Drain asks Run to stop gracefully: stop reading, checkpoint what was
// consumed (if anything), close the loader and return nil. A failed final
// checkpoint is retried (Recover, re-read up to where the drain began,
// checkpoint) within the drain timeout (WithDrainTimeout), after which Run
// returns a *DrainError. Drain returns at once; Run's return says when the
// drain is done. Cancelling Run's context during a drain aborts it. Drain
// is idempotent.
func (c *Connector) Drain() {
	c.drainOnce.Do(func() {
		if c.o.drainTimeout > 0 {
			c.drainTimer = c.o.clock.After(c.o.drainTimeout)
		}
		c.drainReq.Store(true)
		close(c.drainCh)
	})
}

// Decided returns the last decided position the Connector knows of: the
// one Recover returned or the end of the last checkpoint decided since;
// ok is false when no checkpoint was ever decided. Safe for concurrent
// use; after Run returned it is where the next start resumes (unless the
// next Recover heals that checkpoint and resumes from its start).
func (c *Connector) Decided() (pos Position, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.decided == nil {
		return Position{}, false
	}
	return c.decided.clone(), true
}

func (c *Connector) setDecided(p Position) {
	p = p.clone()
	c.mu.Lock()
	c.decided = &p
	c.mu.Unlock()
}

// draining reports whether Drain was called: an atomic load, cheap enough
// for every record (drainCh wakes a blocked poll).
func (c *Connector) draining() bool { return c.drainReq.Load() }
