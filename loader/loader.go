package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Loader loads rows into one table exactly once (or at least once), acting
// as its own 2PC coordinator with a durable checkpoint store (docs/design.md
// §2). Use it from one goroutine: Recover, then Write rows and Checkpoint
// their end position, repeatedly; Close at the end. After an error
// wrapping ErrNeedRecover, call Recover and rewind the source to the
// position it returns. The Loader commits each checkpoint in the
// background while the next one streams.
type Loader struct {
	cfg    Config
	client Doris
	ops    *txnOps
	target Target
	delim  []byte
	log    *slog.Logger
	clock  Clock
	fp     *Failpoints
	knobs  *TestingKnobs
	ledger *ledger.Ledger

	ctx     context.Context // in-flight requests; cancelled by a crash or Close
	cancel  context.CancelFunc
	abandon chan struct{} // closed by a crash or Close (ends Blocks)
	endOnce sync.Once
	crashed atomic.Bool

	smu       sync.Mutex // guards state and store writes
	state     *checkpoint.State
	storeDead bool

	// Used by the caller's goroutine only.
	recovered bool
	broken    error
	closed    bool
	pos       json.RawMessage // start of the current checkpoint
	// first is the caller's first-start position (SetStart), the start of
	// the first checkpoint of a store without a decision; reset by Recover.
	first   json.RawMessage
	cur     *attempt
	pending *pendingCommit
	retryID uint64 // at-least-once: id to reuse on an in-process retry
	wg      sync.WaitGroup
	// watch is closed when a background commit fails; replaced by Recover.
	watch *commitWatch
}

// commitWatch is closed (once) when a background commit of the current
// recovery epoch fails.
type commitWatch struct {
	ch   chan struct{}
	once sync.Once
}

func newCommitWatch() *commitWatch { return &commitWatch{ch: make(chan struct{})} }

func (w *commitWatch) fail() { w.once.Do(func() { close(w.ch) }) }

// attempt is the checkpoint being written.
type attempt struct {
	id        uint64
	label     string
	heal      bool // replays a decided checkpoint found ABORTED
	healed    int  // its Healed count so far
	announced bool // the label is durable in the store
	s         *loadStream
	loads     int // Stream Loads begun (Label Already Exists restarts)
	// maybeLoaded (at-least-once) is set once the load may have committed:
	// it returned success, or its ambiguous outcome could not be settled.
	// Its label is then never reused: Doris would hold it FINISHED.
	maybeLoaded bool
}

// pendingCommit is the background commit of a decided checkpoint.
type pendingCommit struct {
	d    checkpoint.Decision
	done chan struct{}
	err  error
}

// New validates cfg (see Config; errors name the config keys) and returns
// a Loader owning cfg.Store. It refuses BatchMode (not implemented). It opens
// the ledger but reads nothing from the store or Doris: call Recover.
func New(client Doris, cfg Config) (*Loader, error) {
	cfg.applyDefaults()
	if client == nil {
		return nil, errors.New("loader: Doris client is nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := Target{DB: cfg.DB, Table: cfg.Table, Format: cfg.Format, Properties: cfg.Properties}
	delim, err := lineDelimiter(t)
	if err != nil {
		return nil, fmt.Errorf("loader config: %w", err)
	}
	if _, err := bodyCompression(t); err != nil {
		return nil, fmt.Errorf("loader config: %w", err)
	}
	l := &Loader{
		cfg: cfg, client: client, target: t, delim: delim, log: cfg.Logger.With("job", cfg.Job, "table", cfg.DB+"."+cfg.Table),
		clock: cfg.Clock, fp: cfg.Failpoints, knobs: cfg.Knobs, abandon: make(chan struct{}), watch: newCommitWatch(),
	}
	if l.knobs == nil {
		l.knobs = &TestingKnobs{}
	}
	l.ops = &txnOps{client: client, retry: cfg.Retry, clock: cfg.Clock, log: l.log}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if cfg.LedgerDir != "" {
		lg, err := ledger.Open(cfg.LedgerDir)
		if err != nil {
			return nil, fmt.Errorf("loader: %w", err)
		}
		l.ledger = lg
	}
	return l, nil
}

// Position returns the start position of the checkpoint being written: the
// end of the last decided checkpoint, or its start while healing. nil
// before the first checkpoint.
func (l *Loader) Position() json.RawMessage { return l.pos }

// fire passes a cut point.
func (l *Loader) fire(ctx context.Context, name string) error {
	return l.fp.fire(ctx, name, l.abandon)
}

// crash abandons the loader (failpoint Crash): in-flight requests are
// cancelled, nothing is cleaned up, the store and ledger are released
// unwritten, and every later call returns ErrCrashed. Safe from any
// goroutine.
func (l *Loader) crash(at string) {
	if !l.crashed.CompareAndSwap(false, true) {
		return
	}
	l.log.Error("failpoint crash: abandoning the loader", "at", at)
	l.end()
	l.smu.Lock()
	l.storeDead = true
	l.smu.Unlock()
	if err := l.cfg.Store.Close(); err != nil {
		l.log.Warn("close store after crash", "err", err)
	}
	if l.ledger != nil {
		if err := l.ledger.Close(); err != nil {
			l.log.Warn("close ledger after crash", "err", err)
		}
	}
}

func (l *Loader) end() {
	l.endOnce.Do(func() {
		l.cancel()
		close(l.abandon)
	})
}

// crashErr turns errCrash into a crash and ErrCrashed; any error after a
// crash is ErrCrashed too.
func (l *Loader) crashErr(at string, err error) error {
	if errors.Is(err, errCrash) {
		l.crash(at)
	}
	if l.crashed.Load() {
		return ErrCrashed
	}
	return err
}

// usable reports why the loader cannot take rows now.
func (l *Loader) usable() error {
	switch {
	case l.crashed.Load():
		return ErrCrashed
	case l.closed:
		return ErrClosed
	case !l.recovered:
		return ErrNotRecovered
	case l.broken != nil:
		return l.broken
	}
	return nil
}

// save applies mutate to a copy of the state and saves it durably.
func (l *Loader) save(ctx context.Context, mutate func(*checkpoint.State) error) error {
	l.smu.Lock()
	defer l.smu.Unlock()
	if l.storeDead {
		return ErrCrashed
	}
	next := l.state.Clone()
	if err := mutate(next); err != nil {
		return err
	}
	if err := l.cfg.Store.Save(ctx, next); err != nil {
		return err
	}
	l.state = next
	return nil
}

// Write appends row (one JSON object or CSV line, without the line
// delimiter) to the current checkpoint. The first Write of a checkpoint
// begins its Stream Load (announcing its label first when that was not
// done yet, docs/design.md §2 invariant 1). ctx bounds this call; the load
// itself runs until Checkpoint or Close. An error wrapping ErrNeedRecover
// means the checkpoint failed and was aborted.
func (l *Loader) Write(ctx context.Context, row []byte) error {
	if err := l.usable(); err != nil {
		return err
	}
	a := l.cur
	first := a.s == nil
	if first {
		if err := l.begin(ctx, a); err != nil {
			return err
		}
	}
	err := a.s.write(ctx, row)
	if err == nil && first {
		// Hand the first row to Doris: the txn is begun (mid-stream).
		err = a.s.flush(ctx)
	}
	if err != nil {
		if err = l.restartOnConflict(ctx, a, err, func() error { return a.s.flush(ctx) }); err != nil {
			return l.fail(ctx, a, "stream", err, true)
		}
	}
	if first {
		if err := l.fire(ctx, FailMidStream); err != nil {
			return l.fail(ctx, a, "stream", err, true)
		}
	}
	return nil
}

// begin announces a's label if needed and starts its Stream Load.
func (l *Loader) begin(ctx context.Context, a *attempt) error {
	if !a.announced {
		if err := l.fire(ctx, FailBeforeAnnounce); err != nil {
			return l.fail(ctx, a, "announce", err, false)
		}
		var ann checkpoint.Announcement
		err := l.save(ctx, func(st *checkpoint.State) error {
			var err error
			ann, err = st.Announce(l.clock.Now())
			return err
		})
		if err != nil {
			return l.fail(ctx, a, "announce", err, false)
		}
		a.id, a.label, a.announced = ann.ID, ann.Label, true
		if l.knobs.AfterAnnounce != nil {
			l.knobs.AfterAnnounce(ann.ID, ann.Label)
		}
	}
	if err := l.fire(ctx, FailAfterAnnounce); err != nil {
		return l.fail(ctx, a, "begin", err, false)
	}
	a.s = startLoad(l.ctx, l.client, loadRequest(l.target, a.label, l.cfg.Guarantee == ExactlyOnce), l.cfg.BufferSize, l.delim)
	a.loads++
	return nil
}

// maxBeginConflicts bounds the abort-and-begin-again loop on Label Already
// Exists.
const maxBeginConflicts = 3

// restartOnConflict resolves a refusal of the begin of a's load, given
// before Doris read any body byte (every row is still buffered):
//
//   - Label Already Exists (docs/design.md §2: resolved by ExistingJobStatus and
//     the store, never by a new label): our own label RUNNING or
//     PRECOMMITTED (a leftover attempt) is aborted by label and the load
//     begun again; FINISHED is a *FencingError.
//   - the running-txn quota (max_running_txn_num_per_db, docs/doris-facts.md §5)
//     while the previous checkpoint's commit is pending: that txn holds a
//     slot, so the commit is awaited (not consumed: Checkpoint reports its
//     outcome) and the load begun again, once.
//
// After a restart retry is called. Other errors are returned as they are.
func (l *Loader) restartOnConflict(ctx context.Context, a *attempt, err error, retry func() error) error {
	waitedQuota := false
	for err != nil && a.s.unread() {
		switch {
		case errors.Is(err, doris.ErrLabelAlreadyExists):
			st := existingJobStatus(err)
			if st == doris.JobFinished {
				return &FencingError{Label: a.label, State: st}
			}
			if a.loads > maxBeginConflicts {
				return fmt.Errorf("label %s still held after %d aborts: %w", a.label, a.loads-1, err)
			}
			l.log.Warn("label already exists at begin: aborting the leftover txn and beginning again",
				"label", a.label, "existing_job_status", st)
			if aerr := l.ops.abortLabel(ctx, l.cfg.DB, a.label); aerr != nil {
				return errors.Join(err, aerr)
			}
		case errors.Is(err, doris.ErrRunningTxnQuota) && l.pending != nil && !waitedQuota:
			l.log.Warn("running-txn quota reached at begin: waiting for the commit of the previous checkpoint",
				"label", a.label, "previous", l.pending.d.Label)
			select {
			case <-l.pending.done:
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			}
			waitedQuota = true
		default:
			return err
		}
		a.s = a.s.restart(l.ctx, l.client)
		a.loads++
		err = retry()
	}
	return err
}

// fail ends checkpoint a after a failure at stage: the load is abandoned,
// and when abort is set (nothing decided) every txn of its label is
// aborted. The loader then needs Recover; the returned *CheckpointError
// wraps ErrNeedRecover and err. A crash failpoint yields ErrCrashed.
func (l *Loader) fail(ctx context.Context, a *attempt, stage string, err error, abort bool) error {
	if err = l.crashErr(stage, err); errors.Is(err, ErrCrashed) {
		return err
	}
	if a.s != nil {
		a.s.abandon()
	}
	if abort && !(a.maybeLoaded && l.cfg.Guarantee == AtLeastOnce) {
		// A short budget (Retry.AbortMaxElapsed): while Doris is unreachable
		// this abort must not hold the caller for Retry.MaxElapsed. The
		// label stays in the store (announced, or decided while healing),
		// so Recover finds it running and aborts it.
		//
		// The abort does not end with ctx: ctx ending is often what failed
		// the checkpoint (a precommit that never gets an answer, given up on
		// SIGTERM), and aborting with an ended ctx left the txn PREPARE, a
		// running txn until Doris's load timeout (3 days by default,
		// docs/doris-facts.md §5) unless this job starts again. Doris aborts a
		// PREPARE txn by label (docs/doris-facts.md §3.3); the budget bounds it.
		ops := *l.ops
		ops.retry.MaxElapsed = min(l.cfg.Retry.AbortMaxElapsed, l.cfg.Retry.MaxElapsed)
		if aerr := ops.abortLabel(context.WithoutCancel(ctx), l.cfg.DB, a.label); aerr != nil {
			l.log.Error("abort after failed checkpoint gave up; Recover will abort the label", "label", a.label,
				"budget", ops.retry.MaxElapsed, "err", aerr)
			err = errors.Join(err, fmt.Errorf("abort (Recover finishes it): %w", aerr))
		} else if a.s != nil {
			l.evidence(ledger.EventAborted, checkpoint.Decision{ID: a.id, Label: a.label, Start: l.start(),
				Counts: &checkpoint.LoadCounts{Attempts: a.loads}}, doris.TxnAborted, stage+": "+err.Error())
		}
	}
	a.s = nil
	ce := &CheckpointError{ID: a.id, Label: a.label, Stage: stage, Position: l.pos, Err: err}
	if l.cfg.Guarantee == AtLeastOnce {
		// Reuse the label on the retry only when this load surely did not
		// commit; otherwise the retry gets a fresh label (and loads the
		// range again: at-least-once).
		l.retryID = 0
		if !a.maybeLoaded {
			l.retryID = a.id
		}
	}
	l.broken = ce
	l.log.Error("checkpoint failed", "id", a.id, "label", a.label, "stage", stage, "err", err)
	return ce
}
