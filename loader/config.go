package loader

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// Guarantee is a delivery mode (docs/design.md §4).
type Guarantee int

const (
	// ExactlyOnce (the default) runs the 2PC protocol of docs/design.md §2: no
	// loss, no duplicates, at any crash point.
	ExactlyOnce Guarantee = iota
	// AtLeastOnce runs one non-2PC load per checkpoint, its label reused on
	// an in-process retry when the failed load surely did not commit (a
	// fresh label otherwise), the position saved after the load succeeded.
	// A crash, or a failure after the load committed, can load a checkpoint
	// twice (harmless only on Unique Key tables); nothing is lost.
	AtLeastOnce
)

// String returns the config spelling, "exactly-once" or "at-least-once".
func (g Guarantee) String() string {
	switch g {
	case ExactlyOnce:
		return "exactly-once"
	case AtLeastOnce:
		return "at-least-once"
	}
	return fmt.Sprintf("Guarantee(%d)", int(g))
}

// ParseGuarantee parses "exactly-once" or "at-least-once".
func ParseGuarantee(s string) (Guarantee, error) {
	switch s {
	case "exactly-once", "":
		return ExactlyOnce, nil
	case "at-least-once":
		return AtLeastOnce, nil
	}
	return 0, fmt.Errorf("delivery.guarantee %q: want exactly-once or at-least-once", s)
}

// Retry bounds the commit retries (exponential backoff with full jitter),
// label lookups and aborts. Zero fields take the defaults below.
type Retry struct {
	// Initial is the first backoff. Default 100ms.
	Initial time.Duration
	// Max caps one backoff. Default 5s.
	Max time.Duration
	// MaxElapsed gives up on a commit after this long (the error names
	// label and txn id; Recover commits it later). It must stay well below
	// Doris's stream_load_default_precommit_timeout_second (3600 s, §5).
	// Default 10m.
	MaxElapsed time.Duration
	// AbortMaxElapsed bounds the abort-by-label that ends a failed
	// checkpoint (Loader only). While Doris is unreachable that abort would
	// otherwise hold Write or Checkpoint for MaxElapsed; it need not
	// succeed there, because Recover aborts every announced, undecided
	// label anyway (docs/design.md §2 recovery table). At most MaxElapsed.
	// Default 10s.
	AbortMaxElapsed time.Duration
}

// Default Retry values.
const (
	DefaultRetryInitial    = 100 * time.Millisecond
	DefaultRetryMax        = 5 * time.Second
	DefaultRetryMaxElapsed = 10 * time.Minute
	// DefaultRetryAbortMaxElapsed is the default Retry.AbortMaxElapsed.
	DefaultRetryAbortMaxElapsed = 10 * time.Second
)

func (r Retry) withDefaults() Retry {
	if r.Initial == 0 {
		r.Initial = DefaultRetryInitial
	}
	if r.Max == 0 {
		r.Max = DefaultRetryMax
	}
	if r.MaxElapsed == 0 {
		r.MaxElapsed = DefaultRetryMaxElapsed
	}
	if r.AbortMaxElapsed == 0 {
		r.AbortMaxElapsed = DefaultRetryAbortMaxElapsed
	}
	return r
}

func (r Retry) validate(key string) error {
	if r.Initial < 0 || r.Max < 0 || r.MaxElapsed < 0 || r.AbortMaxElapsed < 0 {
		return fmt.Errorf("%s: durations must not be negative (initial %v, max %v, max_elapsed %v, abort_max_elapsed %v)",
			key, r.Initial, r.Max, r.MaxElapsed, r.AbortMaxElapsed)
	}
	if r.Max < r.Initial {
		return fmt.Errorf("%s: max %v is below initial %v", key, r.Max, r.Initial)
	}
	return nil
}

// Clock tells time; the loader uses it for timestamps, backoff waits and
// the commit give-up bound. Default: the system clock.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Config configures a Loader for one target table. Its zero value is not
// valid: Job, DB, Table and Store are required. New validates it once; the
// errors name the config keys (docs/design.md §1).
type Config struct {
	// Job is the job name, which is the label prefix (job.name,
	// [A-Za-z0-9_-]). Required.
	Job string
	// DB and Table name the target table (doris.database, doris.table).
	// Required.
	DB, Table string
	// Tables configures further target tables up front (Loader.WriteTo):
	// their format and Stream Load properties; empty fields take DB,
	// Format and Properties. A table written with WriteTo that is not
	// listed gets those defaults (or Loader.AddTable's settings). Every
	// table's checkpoints are decided by the one store of DB.Table (its
	// owner): a checkpoint has one txn per table it touched.
	Tables []Target
	// TargetFor, when set, gives the settings of a table first written
	// (WriteTo) that Tables and AddTable did not configure: per-table
	// overrides such as a table pattern's properties. Its result's DB and
	// Table are ignored; its empty fields take DB, Format and Properties.
	TargetFor func(db, table string) Target
	// Scope is the writer instance in group mode; default "0" (standalone).
	Scope string
	// Format is the Stream Load format (doris.format): "json" (one object
	// per row, sent as JSON lines) or "csv". Default "json".
	Format string
	// Properties are raw Stream Load headers (doris.properties), e.g.
	// max_filter_ratio, columns, line_delimiter. label, two_phase_commit and
	// format are set by the loader and refused here. compress_type gz or
	// lz4 (any case) compresses the streamed body (the header goes with
	// it); any other value is refused.
	Properties map[string]string
	// Guarantee is delivery.guarantee. Default ExactlyOnce.
	Guarantee Guarantee
	// BatchMode is delivery.batch_mode. Batch mode (size/time-triggered
	// concurrent flushes, docs/design.md §4) is not implemented: New refuses
	// true, naming delivery.guarantee too when it is ExactlyOnce.
	BatchMode bool
	// Store is the checkpoint store (the coordinator's log). Required. The
	// Loader owns it from New on and closes it in Close.
	Store checkpoint.Store
	// LedgerDir is the directory of the evidence ledger (docs/design.md §6);
	// empty: no ledger.
	LedgerDir string
	// Evidence, when set, receives the evidence entries of events that
	// have no decision of their own (an aborted txn, a table created or
	// changed by the sink); the store writes them with its next save
	// (coordlog.Store, docs/design.md §7.3). The entries of decisions,
	// commits, heals and resolutions are the store's own to derive. nil:
	// the local ledger only.
	Evidence EvidenceStager
	// Source names the source in the store's owner record, e.g.
	// "kafka:orders". Optional; must match the store's.
	Source string
	// Retry bounds commit, abort and label-lookup retries.
	Retry Retry
	// BufferSize is the Stream Load body buffer; memory per open load is
	// bounded by it. Default 256 KiB.
	BufferSize int
	// SubLoads is the default sub-load count K of every table (Target.SubLoads
	// overrides it per table; doris.sub_loads): a checkpoint streams a
	// table's rows through up to K concurrent Stream Loads, each a 2PC txn
	// with its own label, all decided by the checkpoint's one decision. Rows
	// go to sub-load key mod K (Loader.WriteToKey). 1 to 256; default 1, the
	// behaviour and labels from before sub-loads. Memory is BufferSize per
	// open sub-load; labels per checkpoint are the touched (table, sub-load)
	// pairs (docs/performance.md, label budget).
	SubLoads int
	// SubLoadsAuto chooses each table's K from measured throughput
	// (doris.sub_loads: auto) for every table whose Target.SubLoads is 0:
	// K starts at SubLoads (1 by default) and, between checkpoints,
	// doubles while the writer waited on the table's Stream Loads for a
	// quarter of the checkpoint or more (the loads are the bottleneck),
	// up to SubLoadsMax, and halves when half the loads would carry the
	// checkpoint's rate at most 40 % busy (subloads_auto.go). The decision
	// records each checkpoint's K, so Recover and heals use the K the
	// checkpoint had. A changed K is logged (Info) with the measured rate.
	SubLoadsAuto bool
	// SubLoadsMax caps K under SubLoadsAuto (doris.sub_loads_max): SubLoads
	// to 256, default DefaultSubLoadsMax. It bounds the labels and running
	// txns per table per checkpoint as a fixed K would.
	SubLoadsMax int
	// SweepInterval is how often, at most, the zombie sweep runs at a
	// checkpoint boundary (it also runs after every Recover): it aborts,
	// by txn id, the running txns of this store's prefix, scope and tables
	// whose checkpoint is at or below the last decided one and that the
	// store does not decide, such as a fenced process's late precommit
	// (docs/design.md §2, zombie sweep). Exactly-once with a TxnInspector
	// only. Default DefaultSweepInterval (1 min); must not be negative.
	SweepInterval time.Duration
	// Failpoints arms cut points (tests, DORIS_SINK_FAILPOINTS). nil: none.
	Failpoints *Failpoints
	// Knobs are testing hooks. nil: none.
	Knobs *TestingKnobs
	// Logger receives the loader's logs. Default: discard.
	Logger *slog.Logger
	// Clock defaults to the system clock.
	Clock Clock
}

// DefaultBufferSize is the default Config.BufferSize.
const DefaultBufferSize = 256 << 10

// reservedProperties are Stream Load headers the loader sets itself.
var reservedProperties = []string{"label", "two_phase_commit", "format"}

func (c *Config) applyDefaults() {
	if c.Scope == "" {
		c.Scope = "0"
	}
	if c.Format == "" {
		c.Format = "json"
	}
	if c.BufferSize == 0 {
		c.BufferSize = DefaultBufferSize
	}
	if c.SubLoads == 0 {
		c.SubLoads = 1
	}
	if c.SubLoadsMax == 0 {
		c.SubLoadsMax = max(DefaultSubLoadsMax, c.SubLoads)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	c.Retry = c.Retry.withDefaults()
	if c.SweepInterval == 0 {
		c.SweepInterval = DefaultSweepInterval
	}
}

// validate checks the whole config once; every error names its keys.
func (c *Config) validate() error {
	var errs []error
	if c.Job == "" {
		errs = append(errs, errors.New("job.name is required: it is the label prefix of every Stream Load"))
	} else if err := label.ValidatePrefix(c.Job); err != nil {
		errs = append(errs, fmt.Errorf("job.name: %w", err))
	}
	if c.DB == "" {
		errs = append(errs, errors.New("doris.database is required"))
	}
	if c.Table == "" {
		errs = append(errs, errors.New("doris.table is required"))
	}
	if err := label.ValidateScope(c.Scope); err != nil {
		errs = append(errs, fmt.Errorf("scope: %w", err))
	}
	if c.Guarantee != ExactlyOnce && c.Guarantee != AtLeastOnce {
		errs = append(errs, fmt.Errorf("delivery.guarantee: unknown value %d", int(c.Guarantee)))
	}
	switch {
	case c.BatchMode && c.Guarantee == ExactlyOnce:
		errs = append(errs, errors.New("delivery.batch_mode: true cannot be combined with delivery.guarantee: exactly-once "+
			"(batch flushes are not bound to checkpoints, so they cannot be committed exactly once; and batch mode is "+
			"not implemented for at-least-once either); set delivery.batch_mode: false"))
	case c.BatchMode:
		errs = append(errs, errors.New("delivery.batch_mode: not implemented (no size/time-triggered concurrent flushes "+
			"yet); set it false: delivery.guarantee: at-least-once already loads one non-2PC Stream Load per checkpoint"))
	}
	if c.Store == nil {
		errs = append(errs, errors.New("job.data_dir: a checkpoint store is required (Config.Store)"))
	}
	for k := range c.Properties {
		for _, r := range reservedProperties {
			if strings.EqualFold(k, r) {
				errs = append(errs, fmt.Errorf("doris.properties.%s: set by the loader, remove it", k))
			}
		}
	}
	if c.BufferSize < 0 {
		errs = append(errs, fmt.Errorf("buffer size %d: must be positive", c.BufferSize))
	}
	if err := validSubLoads(c.SubLoads); err != nil {
		errs = append(errs, fmt.Errorf("doris.sub_loads: %w", err))
	}
	if err := validSubLoads(c.SubLoadsMax); err != nil {
		errs = append(errs, fmt.Errorf("doris.sub_loads_max: %w", err))
	} else if c.SubLoadsMax < c.SubLoads {
		errs = append(errs, fmt.Errorf("doris.sub_loads_max %d is below doris.sub_loads %d (the starting K of doris.sub_loads: auto)", c.SubLoadsMax, c.SubLoads))
	}
	if err := c.Retry.validate("retry"); err != nil {
		errs = append(errs, err)
	}
	if c.SweepInterval < 0 {
		errs = append(errs, fmt.Errorf("sweep interval %v: must not be negative (0 takes the default %v)", c.SweepInterval, DefaultSweepInterval))
	}
	if len(errs) == 0 {
		if _, err := label.Build(c.Job, c.DB, c.Table, c.Scope, 1); err != nil {
			errs = append(errs, fmt.Errorf("job.name/doris.table: %w", err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("loader config: %w", errors.Join(errs...))
	}
	return nil
}

// owner is the store owner this config expects.
func (c *Config) owner() checkpoint.Owner {
	return checkpoint.Owner{Job: c.Job, DB: c.DB, Table: c.Table, Source: c.Source, Writer: c.Scope}
}
