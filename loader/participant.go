package loader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/label"
)

// Target is the table a transaction loads into and how.
type Target struct {
	DB, Table string
	// Format is the Stream Load format, "json" (rows are JSON objects,
	// sent as JSON lines) or "csv". Empty: Doris's default (csv).
	Format string
	// Properties are raw Stream Load headers (docs/doris-facts.md §1.4), e.g.
	// max_filter_ratio, columns, line_delimiter. compress_type (gz or lz4)
	// is not passed raw: the body is compressed as it streams and the
	// header sent with it; other values are refused.
	Properties map[string]string
	// SubLoads is the table's sub-load count K (Config.SubLoads, used when
	// 0): each checkpoint streams its rows through up to K parallel Stream
	// Loads, routed by the writer's key (Loader.WriteToKey). Only the
	// Loader uses it.
	SubLoads int
}

// Committable is a precommitted transaction to commit or abort later,
// possibly by another process: it is what a coordinator stores in its
// checkpoint (the Go analogue of Flink's DorisCommittable). JSON
// serialisable.
type Committable struct {
	DB    string `json:"db"`
	Table string `json:"table"`
	Label string `json:"label"`
	TxnID int64  `json:"txn_id"`
}

// ParticipantOpt configures a Participant.
type ParticipantOpt interface{ apply(*participantCfg) }

type participantCfg struct {
	retry   Retry
	bufSize int
	log     *slog.Logger
	clock   Clock
}

type participantOpt func(*participantCfg)

func (f participantOpt) apply(c *participantCfg) { f(c) }

// WithRetry bounds commit and abort retries (default: Retry's defaults).
func WithRetry(r Retry) ParticipantOpt {
	return participantOpt(func(c *participantCfg) { c.retry = r })
}

// WithBufferSize sets the body buffer per open transaction (default
// DefaultBufferSize).
func WithBufferSize(n int) ParticipantOpt {
	return participantOpt(func(c *participantCfg) { c.bufSize = n })
}

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) ParticipantOpt {
	return participantOpt(func(c *participantCfg) { c.log = l })
}

// WithClock sets the clock used for backoff (default: system clock).
func WithClock(clk Clock) ParticipantOpt {
	return participantOpt(func(c *participantCfg) { c.clock = clk })
}

// Participant runs Stream Load two-phase-commit transactions for an
// application that coordinates checkpoints itself (the Go analogue of
// Flink's TwoPhaseCommitSinkFunction participant): Begin, Write, Precommit
// give a Committable that the coordinator stores durably; Commit or Abort
// finish it, idempotently; Recover commits restored Committables. Labels
// are the caller's: deterministic, never random (see package label).
// A Participant is safe for concurrent use; each Txn is used by one
// goroutine.
type Participant struct {
	cfg participantCfg
	ops *txnOps
}

// NewParticipant returns a Participant using client.
func NewParticipant(client Doris, opts ...ParticipantOpt) (*Participant, error) {
	if client == nil {
		return nil, errors.New("new participant: client is nil")
	}
	c := participantCfg{bufSize: DefaultBufferSize}
	for _, o := range opts {
		o.apply(&c)
	}
	c.retry = c.retry.withDefaults()
	if err := c.retry.validate("participant retry"); err != nil {
		return nil, err
	}
	if c.bufSize <= 0 {
		return nil, fmt.Errorf("new participant: buffer size %d must be positive", c.bufSize)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.clock == nil {
		c.clock = systemClock{}
	}
	return &Participant{cfg: c, ops: &txnOps{client: client, inspect: inspectorOf(client), retry: c.retry, clock: c.clock, log: c.log}}, nil
}

// Txn is one open two-phase-commit Stream Load. It is not safe for
// concurrent use.
type Txn struct {
	p      *Participant
	label  string
	target Target
	s      *loadStream
	res    *doris.LoadResult
	ended  bool
}

// Begin opens a streaming 2PC Stream Load (two_phase_commit: true) of
// target with lbl. ctx bounds the whole load, until Precommit or Abort.
// Doris begins the txn when the load starts; a label already in use shows
// up as an error of Write or Precommit matching doris.ErrLabelAlreadyExists.
func (p *Participant) Begin(ctx context.Context, lbl string, target Target) (*Txn, error) {
	if err := label.Validate(lbl); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if target.DB == "" || target.Table == "" {
		return nil, fmt.Errorf("begin label %s: target DB and Table are required", lbl)
	}
	if hasProperty(target.Properties, "label") || hasProperty(target.Properties, "two_phase_commit") {
		return nil, fmt.Errorf("begin label %s: target properties must not set label or two_phase_commit", lbl)
	}
	delim, err := lineDelimiter(target)
	if err != nil {
		return nil, fmt.Errorf("begin label %s: %w", lbl, err)
	}
	if _, err := bodyCompression(target); err != nil {
		return nil, fmt.Errorf("begin label %s: %w", lbl, err)
	}
	s := startLoad(ctx, p.ops.client, loadRequest(target, lbl, true), p.cfg.bufSize, delim)
	return &Txn{p: p, label: lbl, target: target, s: s}, nil
}

// Label returns the txn's label.
func (t *Txn) Label() string { return t.label }

// Rows returns how many rows were written.
func (t *Txn) Rows() int64 { return t.s.rows }

// Result returns Doris's Stream Load answer after a successful Precommit
// (row counts, TxnId), nil before.
func (t *Txn) Result() *doris.LoadResult { return t.res }

// Write appends row and the line delimiter to the body. row must not
// contain the delimiter. It may block while Doris reads the body. An error
// means the load failed (the error is Doris's answer when it answered):
// call Abort.
func (t *Txn) Write(row []byte) error {
	if t.ended {
		return fmt.Errorf("write to label %s: transaction already precommitted or aborted", t.label)
	}
	if err := t.s.write(context.Background(), row); err != nil { // Begin's ctx bounds the load
		return fmt.Errorf("write to label %s: %w", t.label, err)
	}
	return nil
}

// Precommit ends the body; Doris precommits the txn (PRECOMMITTED) and the
// returned Committable can be committed. Until it is committed, Doris
// aborts it after stream_load_default_precommit_timeout_second (3600 s,
// docs/doris-facts.md §5). On error the txn may be begun: call Abort.
func (t *Txn) Precommit(ctx context.Context) (Committable, error) {
	if t.ended {
		return Committable{}, fmt.Errorf("precommit label %s: transaction already precommitted or aborted", t.label)
	}
	res, err := t.s.finish(ctx)
	if err != nil {
		return Committable{}, fmt.Errorf("precommit label %s: %w", t.label, err)
	}
	t.ended = true
	t.res = res
	if res.TxnID <= 0 {
		return Committable{}, fmt.Errorf("precommit label %s: Doris answered %s without a txn id", t.label, res.Status)
	}
	return Committable{DB: t.target.DB, Table: t.target.Table, Label: t.label, TxnID: res.TxnID}, nil
}

// Abort cancels the load if still streaming and aborts whatever txn holds
// the label (PREPARE or PRECOMMITTED). It is idempotent; it fails only when
// the label is committed, or Doris cannot be reached within the retry
// budget.
func (t *Txn) Abort(ctx context.Context) error {
	if !t.ended {
		t.s.abandon()
		t.ended = true
	}
	return t.p.ops.abortLabel(ctx, t.target.DB, t.label)
}

// Commit commits c. Idempotent: an already COMMITTED or VISIBLE txn is
// success. Errors: *AbortedError (ErrTxnAborted) when Doris aborted it (its
// rows must be replayed), or an error naming label and txn id when the
// retry budget ran out. Ambiguous answers are resolved with get_load_state
// (docs/doris-facts.md §6.1).
func (p *Participant) Commit(ctx context.Context, c Committable) error {
	if err := c.validate(); err != nil {
		return err
	}
	return p.ops.commit(ctx, c.DB, c.Label, c.TxnID)
}

// Abort aborts c. Idempotent: already aborted or not found is success; an
// error when the txn is already committed.
func (p *Participant) Abort(ctx context.Context, c Committable) error {
	if err := c.validate(); err != nil {
		return err
	}
	return p.ops.abortTxn(ctx, c.DB, c.Label, c.TxnID)
}

// Recover commits committables restored from the coordinator's checkpoint
// (all of them, in order). An aborted one is an *AbortedError naming label
// and reason: the caller must replay its rows. The errors of all
// committables are joined.
func (p *Participant) Recover(ctx context.Context, cs []Committable) error {
	var errs []error
	for _, c := range cs {
		if err := p.Commit(ctx, c); err != nil {
			errs = append(errs, fmt.Errorf("recover: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (c Committable) validate() error {
	if c.DB == "" || c.Label == "" || c.TxnID <= 0 {
		return fmt.Errorf("committable %+v: db, label and a positive txn id are required", c)
	}
	return nil
}
