package kafka

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader"
)

// Opt configures a Connector beyond its Config (collaborators, hooks,
// tuning). Options are applied in order by New.
type Opt interface{ apply(*options) }

type options struct {
	logger        *slog.Logger
	clock         loader.Clock
	metrics       *Metrics
	knobs         *TestingKnobs
	onCheckpoint  func(CheckpointStats)
	kgoOpts       []kgo.Opt
	backoffMin    time.Duration
	backoffMax    time.Duration
	closeTimeout  time.Duration
	commitTimeout time.Duration
	drainTimeout  time.Duration
	columns       []string
	failFast      time.Duration
	startStore    StartStore
	fenceCheck    func(context.Context) error
	fenceEvery    time.Duration
	evolver       SchemaEvolver
	stager        DeadLetterStager
	dlLogEvery    time.Duration
	checkTable    *schema.Table
	checkProps    map[string]string
	routedCheck   *routedCheckOpt
	routedColumns func(ctx context.Context, table string) []string
	tableEvolvers func(table string) SchemaEvolver
	tableDeletes  func(table string) DeleteConfig

	// partitionFilter selects the partitions read (WithPartitionFilter);
	// nil: all.
	partitionFilter func(topic string, partition int32) bool
}

func defaultOptions() options {
	return options{
		logger:        slog.New(slog.DiscardHandler),
		clock:         systemClock{},
		backoffMin:    DefaultBackoffMin,
		backoffMax:    DefaultBackoffMax,
		closeTimeout:  30 * time.Second,
		commitTimeout: 10 * time.Second,
		drainTimeout:  DefaultDrainTimeout,
		failFast:      DefaultFailFastAfter,
		dlLogEvery:    DefaultDeadLetterLogInterval,
	}
}

type optFunc func(*options)

func (f optFunc) apply(o *options) { f(o) }

// WithLogger sets the logger. Default: discard.
func WithLogger(l *slog.Logger) Opt { return optFunc(func(o *options) { o.logger = l }) }

// WithClock sets the clock of the checkpoint interval, partition refresh
// and recovery backoff (tests inject a manual clock). Default: the system
// clock.
func WithClock(c loader.Clock) Opt { return optFunc(func(o *options) { o.clock = c }) }

// WithMetrics makes the Connector count into m (for example to export it
// to Prometheus). Default: a Metrics of its own (see Connector.Metrics).
func WithMetrics(m *Metrics) Opt { return optFunc(func(o *options) { o.metrics = m }) }

// WithTestingKnobs installs test hooks. Default: none.
func WithTestingKnobs(k *TestingKnobs) Opt { return optFunc(func(o *options) { o.knobs = k }) }

// WithOnCheckpoint calls fn on the Run goroutine after every checkpoint
// attempt (successful or not) with what it covered. fn must not block for
// long. Default: none.
func WithOnCheckpoint(fn func(CheckpointStats)) Opt {
	return optFunc(func(o *options) { o.onCheckpoint = fn })
}

// WithKgoOpts appends franz-go options to the ones the Connector builds
// from Config (e.g. kgo.WithLogger, kgo.FetchMaxWait). Options that
// change what is consumed (ConsumeTopics, ConsumerGroup, …) break the
// Connector's exactly-once contract and must not be passed.
func WithKgoOpts(opts ...kgo.Opt) Opt {
	return optFunc(func(o *options) { o.kgoOpts = append(o.kgoOpts, opts...) })
}

// Defaults of WithRecoverBackoff and WithFailFastAfter.
const (
	DefaultBackoffMin = time.Second
	// DefaultBackoffMax bounds a stuck job to about one failed
	// transaction per minute (60 per hour, a sixth of a healthy job's
	// labels at a 10 s checkpoint interval): every failed checkpoint
	// attempt is a finished transaction counting towards Doris's
	// label_num_threshold (2000 per db).
	DefaultBackoffMax    = time.Minute
	DefaultFailFastAfter = 30 * time.Second
)

// WithRecoverBackoff sets the backoff before each retry of a run of
// failures (a failed checkpoint, a failed loader.Recover, a failed
// start-up look-up): min after the first failure, doubling with each
// consecutive failure up to max; a decided checkpoint resets it. Default
// DefaultBackoffMin up to DefaultBackoffMax. Zero values retry at once
// (tests).
func WithRecoverBackoff(min, max time.Duration) Opt {
	return optFunc(func(o *options) { o.backoffMin, o.backoffMax = min, max })
}

// WithFailFastAfter sets how long a failure that retrying cannot fix may
// persist before Run gives up with a *FatalError: Doris refusing the
// credentials (doris.ErrUnauthorized), an unknown database or table
// (doris.ErrNotFound, also a table dropped and not recreated), a topic that
// does not exist, a checkpoint store that cannot be re-synced
// (checkpoint.ErrResyncFailed; a failed save alone is retried, since the
// next Recover re-syncs the store). The grace lets a table or topic being created
// or recreated appear. Zero gives up at the first such failure; negative
// never gives up (retry with backoff forever). During a drain such a
// failure ends Run at once (unless d is negative). Default
// DefaultFailFastAfter. Doris refusing a checkpoint's rows
// (doris.ErrDataQuality) is not retried at all (*RejectedError).
func WithFailFastAfter(d time.Duration) Opt { return optFunc(func(o *options) { o.failFast = d }) }

// WithCloseTimeout bounds the loader's Close (which aborts an open
// transaction) after Run's context was cancelled. Default 30s.
func WithCloseTimeout(d time.Duration) Opt { return optFunc(func(o *options) { o.closeTimeout = d }) }

// DefaultDrainTimeout is the default of WithDrainTimeout.
const DefaultDrainTimeout = 2 * time.Minute

// WithDrainTimeout bounds a drain (after Drain, on the Connector's clock):
// the final checkpoint and, when it fails, its retries (backoff, Recover,
// re-reading up to the offsets consumed when the drain began, checkpoint
// again). When d passes, whatever is in flight is cancelled and Run
// returns a *DrainError. Zero or negative: no bound (only cancelling Run's
// context ends a drain). Default DefaultDrainTimeout.
func WithDrainTimeout(d time.Duration) Opt { return optFunc(func(o *options) { o.drainTimeout = d }) }

// WithGroupCommitTimeout bounds each monitoring commit of offsets to the
// consumer group. Default 10s.
func WithGroupCommitTimeout(d time.Duration) Opt {
	return optFunc(func(o *options) { o.commitTimeout = d })
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TestingKnobs are hooks for tests: each nil by default, each run on the
// Run goroutine (or the partition-refresh goroutine, as noted). Knobs
// observe; they must not call back into the Connector except Drain.
type TestingKnobs struct {
	// AfterStart runs once the start position is known and consumption is
	// assigned.
	AfterStart func(start Position)
	// AfterPoll runs after each poll's records were handled, with the
	// position consumed so far (next offset per partition).
	AfterPoll func(consumed Position)
	// AfterRewind runs after a Recover following a failed checkpoint
	// rewound consumption to pos.
	AfterRewind func(pos Position)
	// AfterPartitionsAdded runs on the refresh goroutine after new
	// partitions were assigned.
	AfterPartitionsAdded func(partitions []int32)
	// AfterTopicsAdded runs on the Run goroutine after new topics matching
	// Config.TopicRegex were assigned (from their earliest offsets).
	AfterTopicsAdded func(topics []string)
	// AfterGroupCommit runs after each monitoring commit to the consumer
	// group, with its error.
	AfterGroupCommit func(pos Position, err error)
	// BeforeBackoff runs before each backoff wait of a run of failures
	// that is not zero, with its duration.
	BeforeBackoff func(d time.Duration)
}

// WithTableColumns names the columns a JSON row maps to (the table's
// columns, or the names of the Stream Load "columns" header): every
// top-level field of a row (formats json and debezium) that is none of
// them is counted in Metrics.UnknownFields and named once in a warning,
// since Doris ignores it silently. Default: not checked. With
// Config.Routing it is not used: WithRoutedTableColumns names each routed
// table's columns.
func WithTableColumns(columns []string) Opt {
	return optFunc(func(o *options) { o.columns = columns })
}
