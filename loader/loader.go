package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Loader loads rows into one table, or several, exactly once (or at least
// once), acting as its own 2PC coordinator with a durable checkpoint store
// (docs/design.md §2). Use it from one goroutine: Recover, then Write rows
// (WriteTo for a table other than Config.Table) and Checkpoint their end
// position, repeatedly; Close at the end. After an error wrapping
// ErrNeedRecover, call Recover and rewind the source to the position it
// returns. The Loader commits each checkpoint in the background while the
// next one streams.
//
// A checkpoint has one Stream Load transaction per table it touched (none
// for an untouched table); at the barrier all are precommitted, one
// decision records them all, and each is committed (docs/design.md §2).
// Memory is bounded by Config.BufferSize per table open in the current
// checkpoint.
type Loader struct {
	cfg    Config
	client Doris
	ops    *txnOps
	owner  *tableTarget // Config.DB.Config.Table
	tables *tableSet
	log    *slog.Logger
	clock  Clock
	fp     *Failpoints
	knobs  *TestingKnobs
	ledger *ledger.Ledger
	// inspect reads txns over the FE MySQL protocol for the identity
	// checks (TxnInspector); nil without MySQL.
	inspect TxnInspector

	ctx     context.Context // in-flight requests; cancelled by a crash or Close
	cancel  context.CancelFunc
	abandon chan struct{} // closed by a crash or Close (ends Blocks)
	endOnce sync.Once
	crashed atomic.Bool
	dying   atomic.Bool // a crash failpoint acted (Failpoints.fire)

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

	// stopped is a stop no Recover of this process can undo (stopIgnored).
	stopped error

	// sweeps counts the zombie sweeps' aborts; lastSweep is when the last
	// sweep ran (sweep.go).
	sweeps    SweepStats
	lastSweep time.Time
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
	label     string // the owner table's label of id (Decision.Label)
	announced bool   // id is handed out: the owner table's label is durable in the store
	// heal, when set, replays decided checkpoint id into the tables whose
	// txn Doris aborted.
	heal *healPlan
	// loads are the (table, sub-load) loads written in this attempt, in
	// first-write order; byTarget indexes them.
	loads    []*tableLoad
	byTarget map[subTarget]*tableLoad
	last     *tableLoad // the load of the last row (rows often come in runs of one table)
	// skipped counts, by (table, sub-load), rows of a heal not loaded: that
	// txn of the healed decision is committed.
	skipped map[txnKey]int64
	// started is when the attempt began (the previous decision, else its
	// first load of a table with Config.SubLoadsAuto): the wall time of
	// autoK's measure.
	started time.Time
}

// healPlan is what a heal replays: the decision being healed and, by
// (table, sub-load), the Healed count of each txn found ABORTED (the
// sub-loads the heal loads again; the others are skipped).
type healPlan struct {
	d      checkpoint.Decision
	tables map[txnKey]int
}

// tableLoad is the load of one sub-load of one table in an attempt.
type tableLoad struct {
	tt    *tableTarget
	sub   int // sub-load index
	subs  int // the table's sub-load count K in this attempt
	label string
	s     *loadStream
	loads int // Stream Loads begun (Label Already Exists restarts)
	// maybeLoaded (at-least-once) is set once the load may have committed:
	// it returned success, or its ambiguous outcome could not be settled.
	// Its label is then never reused: Doris would hold it FINISHED.
	maybeLoaded bool
	res         *doris.LoadResult
	// ignored is set when Doris committed a load sent to be precommitted
	// (doris.ErrTwoPhaseCommitIgnored): its rows are visible already.
	ignored error
}

// load returns a's load of txn k, nil if a has none.
func (a *attempt) load(k txnKey) *tableLoad {
	for _, tl := range a.loads {
		if tl.tt.name == k.table && tl.sub == k.sub {
			return tl
		}
	}
	return nil
}

// key returns the txn key of tl.
func (tl *tableLoad) key() txnKey { return txnKey{tl.tt.name, tl.sub} }

// open reports whether a has a Stream Load begun.
func (a *attempt) open() bool { return len(a.loads) > 0 }

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
	owner, err := newTableTarget(&cfg, Target{DB: cfg.DB, Table: cfg.Table, Format: cfg.Format, Properties: cfg.Properties})
	if err != nil {
		return nil, fmt.Errorf("loader config: %w", err)
	}
	tables := &tableSet{byName: map[string]*tableTarget{owner.name: owner}}
	for _, t := range cfg.Tables {
		tt, err := newTableTarget(&cfg, t)
		if err == nil {
			err = tables.add(tt)
		}
		if err != nil {
			return nil, fmt.Errorf("loader config: tables: %w", err)
		}
	}
	l := &Loader{
		cfg: cfg, client: client, owner: owner, tables: tables, log: cfg.Logger.With("job", cfg.Job, "table", cfg.DB+"."+cfg.Table),
		clock: cfg.Clock, fp: cfg.Failpoints, knobs: cfg.Knobs, abandon: make(chan struct{}), watch: newCommitWatch(),
	}
	if l.knobs == nil {
		l.knobs = &TestingKnobs{}
	}
	l.inspect = inspectorOf(client)
	l.ops = &txnOps{client: client, inspect: l.inspect, retry: cfg.Retry, clock: cfg.Clock, log: l.log}
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
	return l.fp.fire(ctx, name, l.abandon, &l.dying)
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
// delimiter) to the current checkpoint's load of Config.Table: WriteTo
// of that table.
func (l *Loader) Write(ctx context.Context, row []byte) error {
	if err := l.usable(); err != nil {
		return err
	}
	return l.writeTo(ctx, l.owner, 0, row)
}

// WriteTo appends row (one JSON object or CSV line, without the line
// delimiter) to the current checkpoint's load of table: "db.table", or a
// table of Config.DB. A table not configured (Config.Table,
// Config.Tables, AddTable) is configured on its first row with Config's
// format and properties; one that cannot be (a name no label can hold)
// is refused with an error that does not end the checkpoint.
//
// The first row of a checkpoint for a table begins that table's Stream
// Load, announcing its label first when that was not done yet
// (docs/design.md §2 invariant 1): a table first written in the middle of
// a checkpoint costs one store write before its load begins; a table
// written in the previous checkpoint was announced with its decision.
// While a checkpoint heals (Healing), rows of a table whose txn of the
// healed decision is committed are skipped (counted in the ledger), and a
// row of a table the decision has no txn of is refused (*UnknownTableError
// with HealOf; with a decision without counts, the heal fails: routing
// changed since the decision). A row of a table Doris does not have, other
// than Config.Table, is refused with an *UnknownTableError that does not
// end the checkpoint (a missing Config.Table fails the checkpoint, as it
// always did). Checkpoint refuses to decide a heal whose replay
// does not match the decision table by table (*HealMismatchError). A
// table with sub-loads (Config.SubLoads K > 1) gets the row in sub-load 0,
// as WriteToKey with key 0 would route it. ctx bounds this call; the load itself runs until
// Checkpoint or Close. An error wrapping ErrNeedRecover means the
// checkpoint failed and every txn of it was aborted.
func (l *Loader) WriteTo(ctx context.Context, table string, row []byte) error {
	if err := l.usable(); err != nil {
		return err
	}
	tt, err := l.target(table)
	if err != nil {
		return err
	}
	return l.writeTo(ctx, tt, l.subOf(tt, 0), row)
}

// writeTo appends row to a's load of sub-load sub of tt.
func (l *Loader) writeTo(ctx context.Context, tt *tableTarget, sub int, row []byte) error {
	a := l.cur
	tl := a.last
	if tl == nil || tl.tt != tt || tl.sub != sub {
		tl = a.byTarget[subTarget{tt, sub}]
	}
	first := tl == nil
	if first {
		if h := a.heal; h != nil {
			k := txnKey{tt.name, sub}
			if _, ok := h.tables[k]; !ok {
				if h.d.SubTxn(tt.name, sub) != nil {
					if a.skipped == nil {
						a.skipped = map[txnKey]int64{}
					}
					a.skipped[k]++ // its txn is committed
					return nil
				}
				if h.d.HasTable(tt.name) {
					return l.fail(ctx, a, "heal", fmt.Errorf("heal of checkpoint %d: a row routes to table %s sub-load %d "+
						"of %d, which the decision has no txn of (its txns: %s): the routing keys changed since the "+
						"checkpoint was decided; restore the routing of that time to heal it",
						a.id, tt.name, sub, h.d.SubLoads(tt.name), txnTables(&h.d)), true)
				}
				if tt != l.owner && healCounted(&h.d) {
					// No row of it was loaded by the decision: its records
					// were refused then (UnknownTableError); a routing
					// change shows in the counts (checkHeal).
					return &UnknownTableError{Table: tt.name, HealOf: a.id}
				}
				return l.fail(ctx, a, "heal", fmt.Errorf("heal of checkpoint %d: a row routes to table %s, which the "+
					"decision has no txn of (its txns: %s): the routing changed since the checkpoint was decided; "+
					"restore the routing of that time to heal it", a.id, tt.name, txnTables(&h.d)), true)
			}
		}
		var err error
		if tl, err = l.begin(ctx, a, tt, sub); err != nil {
			return err
		}
	}
	a.last = tl
	err := tl.s.write(ctx, row)
	if err == nil && first {
		// Hand the first row to Doris: the txn is begun (mid-stream).
		err = tl.s.flush(ctx)
	}
	if err != nil {
		if err = l.restartOnConflict(ctx, tl, err, func() error { return tl.s.flush(ctx) }); err != nil {
			if first && a.heal == nil && tt != l.owner && errors.Is(err, doris.ErrNotFound) && tl.s.unread() {
				return l.dropUnknown(a, tl, err) // no such table: the row's error, not the checkpoint's
			}
			return l.fail(ctx, a, "stream", fmt.Errorf("table %s%s label %s: %w", tt.name, subNote(tl), tl.label, err), true)
		}
	}
	if first {
		if err := l.fire(ctx, FailMidStream); err != nil {
			return l.fail(ctx, a, "stream", err, true)
		}
	}
	return nil
}

// txnTables lists the tables of d's txns (with their sub-load when the
// table has several).
func txnTables(d *checkpoint.Decision) string {
	names := make([]string, len(d.Txns))
	for i, t := range d.Txns {
		names[i] = t.Table
		if t.Subs > 1 {
			names[i] += fmt.Sprintf(" sub-load %d", t.Sub)
		}
	}
	return strings.Join(names, ", ")
}

// subNote is " sub-load i" for a load of a table with sub-loads, "".
func subNote(tl *tableLoad) string {
	if tl.subs <= 1 {
		return ""
	}
	return fmt.Sprintf(" sub-load %d", tl.sub)
}

// announced reports whether the store announces lbl.
func (l *Loader) announced(lbl string) bool {
	l.smu.Lock()
	defer l.smu.Unlock()
	return slices.ContainsFunc(l.state.Announced, func(a checkpoint.Announcement) bool { return a.Label == lbl })
}

// begin announces the label of a's load of tt if needed (handing out a's
// id first when it has none yet: one store write either way) and starts
// that Stream Load.
func (l *Loader) begin(ctx context.Context, a *attempt, tt *tableTarget, sub int) (*tableLoad, error) {
	tl := &tableLoad{tt: tt, sub: sub, subs: tt.k()}
	if a.heal != nil {
		t := a.heal.d.SubTxn(tt.name, sub)
		tl.label, tl.subs = t.Label, max(t.Subs, 1) // decided: healing reuses it
	} else {
		var lbl string
		if a.announced {
			var err error
			if lbl, err = l.cfg.owner().SubLabel(tt.name, sub, a.id); err != nil {
				return nil, l.fail(ctx, a, "announce", err, true)
			}
		}
		if !a.announced || !l.announced(lbl) {
			if err := l.fire(ctx, FailBeforeAnnounce); err != nil {
				return nil, l.fail(ctx, a, "announce", err, true)
			}
			var own, ann checkpoint.Announcement
			err := l.save(ctx, func(st *checkpoint.State) error {
				id := a.id
				if !a.announced {
					var err error
					if own, err = st.Announce(l.clock.Now()); err != nil {
						return err
					}
					id = own.ID
				}
				var err error
				ann, err = st.AnnounceSub(id, tt.name, sub, l.clock.Now())
				return err
			})
			if err != nil {
				return nil, l.fail(ctx, a, "announce", fmt.Errorf("announce table %s%s: %w", tt.name, subNote(tl), err), true)
			}
			if !a.announced {
				a.id, a.label, a.announced = own.ID, own.Label, true
				if l.knobs.AfterAnnounce != nil && own.Label != ann.Label {
					l.knobs.AfterAnnounce(own.ID, own.Label)
				}
			}
			if l.knobs.AfterAnnounce != nil {
				l.knobs.AfterAnnounce(ann.ID, ann.Label)
			}
			lbl = ann.Label
		}
		tl.label = lbl
	}
	if err := l.fire(ctx, FailAfterAnnounce); err != nil {
		return nil, l.fail(ctx, a, "begin", err, true)
	}
	req := loadRequest(tt.t, tl.label, l.cfg.Guarantee == ExactlyOnce)
	req.BESlot = beSlot(sub, a.id)
	tl.s = startLoad(l.ctx, l.client, req, l.cfg.BufferSize, tt.delim)
	if tt.auto != nil {
		tl.s.now = l.clock.Now
		if a.started.IsZero() {
			a.started = l.clock.Now()
		}
	}
	tl.loads++
	a.loads = append(a.loads, tl)
	if a.byTarget == nil {
		a.byTarget = map[subTarget]*tableLoad{}
	}
	a.byTarget[subTarget{tt, sub}] = tl
	return tl, nil
}

// maxBeginConflicts bounds the abort-and-begin-again loop on Label Already
// Exists.
const maxBeginConflicts = 3

// restartOnConflict resolves a refusal of the begin of tl's load, given
// before Doris read any body byte (every row is still buffered):
//
//   - Label Already Exists (docs/design.md §2: resolved by ExistingJobStatus and
//     the store, never by a new label): our own label RUNNING or
//     PRECOMMITTED (a leftover attempt) is aborted by label and the load
//     begun again; FINISHED is a *FencingError.
//   - the running-txn quota (max_running_txn_num_per_db, docs/doris-facts.md §5)
//     while the previous checkpoint's commit is pending: its txns hold
//     slots, so the commit is awaited (not consumed: Checkpoint reports its
//     outcome) and the load begun again, once.
//
// After a restart retry is called. Other errors are returned as they are.
// Safe to run for several tables at once (Checkpoint's precommits).
func (l *Loader) restartOnConflict(ctx context.Context, tl *tableLoad, err error, retry func() error) error {
	waitedQuota := false
	for err != nil && tl.s.unread() {
		switch {
		case errors.Is(err, doris.ErrLabelAlreadyExists):
			st := existingJobStatus(err)
			if st == doris.JobFinished {
				return &FencingError{Label: tl.label, State: st}
			}
			if tl.loads > maxBeginConflicts {
				return fmt.Errorf("label %s still held after %d aborts: %w", tl.label, tl.loads-1, err)
			}
			l.log.Warn("label already exists at begin: aborting the leftover txn and beginning again",
				"label", tl.label, "existing_job_status", st)
			if aerr := l.ops.abortLabel(ctx, tl.tt.t.DB, tl.label); aerr != nil {
				return errors.Join(err, aerr)
			}
		case errors.Is(err, doris.ErrRunningTxnQuota) && l.pending != nil && !waitedQuota:
			l.log.Warn("running-txn quota reached at begin: waiting for the commit of the previous checkpoint",
				"label", tl.label, "previous", l.pending.d.Label)
			select {
			case <-l.pending.done:
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			}
			waitedQuota = true
		default:
			return err
		}
		tl.s = tl.s.restart(l.ctx, l.client)
		tl.loads++
		err = retry()
	}
	return err
}

// fail ends checkpoint a after a failure at stage: every load is
// abandoned, and when abort is set (nothing decided) every txn of the
// checkpoint is aborted, in every table. The loader then needs Recover;
// the returned *CheckpointError wraps ErrNeedRecover and err. A crash
// failpoint yields ErrCrashed.
func (l *Loader) fail(ctx context.Context, a *attempt, stage string, err error, abort bool) error {
	if err = l.crashErr(stage, err); errors.Is(err, ErrCrashed) {
		return err
	}
	for _, tl := range a.loads {
		if tl.s != nil {
			tl.s.abandon()
		}
	}
	var ignored []*tableLoad // committed by Doris without precommit: cannot be aborted
	for _, tl := range a.loads {
		if tl.ignored != nil && abort {
			ignored = append(ignored, tl)
		}
	}
	if abort {
		// A short budget (Retry.AbortMaxElapsed): while Doris is unreachable
		// this abort must not hold the caller for Retry.MaxElapsed. The
		// labels stay in the store (announced, or decided while healing),
		// so Recover finds them running and aborts them.
		//
		// The abort does not end with ctx: ctx ending is often what failed
		// the checkpoint (a precommit that never gets an answer, given up on
		// SIGTERM), and aborting with an ended ctx left the txn PREPARE, a
		// running txn until Doris's load timeout (3 days by default,
		// docs/doris-facts.md §5) unless this job starts again. Doris aborts a
		// PREPARE txn by label (docs/doris-facts.md §3.3); the budget bounds it.
		ops := *l.ops
		ops.retry.MaxElapsed = min(l.cfg.Retry.AbortMaxElapsed, l.cfg.Retry.MaxElapsed)
		aerrs := make([]error, len(a.loads))
		parallel(len(a.loads), func(i int) {
			tl := a.loads[i]
			if (tl.maybeLoaded && l.cfg.Guarantee == AtLeastOnce) || tl.ignored != nil {
				return
			}
			if aerr := ops.abortLabel(context.WithoutCancel(ctx), tl.tt.t.DB, tl.label); aerr != nil {
				l.log.Error("abort after failed checkpoint gave up; Recover will abort the label", "label", tl.label,
					"budget", ops.retry.MaxElapsed, "err", aerr)
				aerrs[i] = fmt.Errorf("abort (Recover finishes it): %w", aerr)
				return
			}
			l.txnEvidence(ledger.EventAborted, &checkpoint.Decision{ID: a.id, Start: l.start()},
				checkpoint.Txn{Table: tl.tt.name, Sub: tl.sub, Subs: subsOf(tl.subs), Label: tl.label, Counts: &checkpoint.LoadCounts{Attempts: tl.loads}},
				0, doris.TxnAborted, stage+": "+err.Error())
		})
		if aerr := errors.Join(aerrs...); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	if len(ignored) > 0 {
		return l.stopIgnored(a, stage, err, ignored)
	}
	maybeLoaded := false
	for _, tl := range a.loads {
		tl.s = nil
		maybeLoaded = maybeLoaded || tl.maybeLoaded
	}
	a.loads, a.byTarget, a.last = nil, nil, nil
	ce := &CheckpointError{ID: a.id, Label: a.label, Stage: stage, Position: l.pos, Err: err}
	if l.cfg.Guarantee == AtLeastOnce {
		// Reuse the labels on the retry only when no load surely committed;
		// otherwise the retry gets a fresh id (and loads the range again:
		// at-least-once).
		l.retryID = 0
		if !maybeLoaded && a.announced {
			l.retryID = a.id
		}
	}
	l.broken = ce
	l.log.Error("checkpoint failed", "id", a.id, "label", a.label, "stage", stage, "err", err)
	return ce
}

// stopIgnored stops the loader for good after checkpoint a failed at
// stage (cause) while Doris had committed the loads ignored without
// precommit (doris.ErrTwoPhaseCommitIgnored; the other loads are aborted).
// Their rows are visible for a checkpoint that is not decided and cannot
// be aborted: a replay would load them twice, a decision would lose the
// failed tables' rows, so no Recover can finish it. The error wraps
// doris.ErrTwoPhaseCommitIgnored, not ErrNeedRecover, names each
// committed table, label and txn and the checkpoint's range, and is
// returned by every later call, Recover included. A restart finds those
// labels announced and VISIBLE: a *FencingError.
func (l *Loader) stopIgnored(a *attempt, stage string, cause error, ignored []*tableLoad) error {
	errs := make([]error, len(ignored))
	for i, tl := range ignored {
		var rows int64
		if tl.res != nil {
			rows = tl.res.NumberLoadedRows
		}
		errs[i] = fmt.Errorf("table %s label %s (txn %d, %d rows visible): %w", tl.tt.name, tl.label, tl.res.TxnID,
			rows, tl.ignored)
	}
	for _, tl := range a.loads {
		tl.s = nil
	}
	a.loads = nil
	l.stopped = fmt.Errorf("checkpoint %d from %s failed at %s (%v) after Doris committed loads without "+
		"precommit (two_phase_commit ignored): %w; those rows are visible for a checkpoint that is not decided (the other tables' "+
		"loads are aborted) and cannot be aborted, so neither a replay (it loads them twice) nor a decision (it "+
		"loses the other tables' rows) is exactly once: stopping; a restart stops with a fencing violation on "+
		"those labels until an operator reconciles the tables by hand. Exactly-once needs the two_phase_commit "+
		"header to reach the BE: check the proxies between doris-sink and Doris (nginx drops headers with "+
		"underscores unless underscores_in_headers is on)",
		a.id, posString(l.pos), stage, cause, errors.Join(errs...))
	l.broken = l.stopped
	l.log.Error("stream load committed without precommit in a failed checkpoint: stopping", "id", a.id,
		"stage", stage, "err", l.stopped)
	return l.stopped
}
