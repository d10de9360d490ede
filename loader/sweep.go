package loader

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// DefaultSweepInterval is the default Config.SweepInterval.
const DefaultSweepInterval = time.Minute

// SweepStats counts what the zombie sweeps of a Loader did (Loader.SweepStats).
// Safe for concurrent reads.
type SweepStats struct {
	// Aborted counts zombie txns the sweeps aborted by txn id.
	Aborted atomic.Int64
	// Failed counts zombie txns whose abort failed (each is retried by the
	// next sweep) or that were found committed by someone else.
	Failed atomic.Int64
}

// SweepStats returns the Loader's sweep counters (docs/operations.md, metrics:
// doris_sink_zombie_txns_aborted_total, doris_sink_zombie_txn_abort_failures_total).
func (l *Loader) SweepStats() *SweepStats { return &l.sweeps }

// statusLister lists a db's txns in one state (SHOW TRANSACTION WHERE
// STATUS = …, docs/doris-facts.md §6.2); *doris.Client has it. The sweep
// prefers it to the label LIKE listing, which also returns every VISIBLE
// txn of the prefix Doris still keeps.
type statusLister interface {
	TransactionsByStatus(ctx context.Context, db string, status doris.TxnStatus) ([]doris.Transaction, error)
}

// scopeTables returns the databases and label table tags of the tables
// st's store writes: the owner's, the configured ones, and those its
// decisions and announcements name. Another store of the same job name
// may write other tables under the same scope (one process per table):
// their labels are not this store's.
func (l *Loader) scopeTables(st *checkpoint.State) (dbs []string, tags map[string]bool) {
	tables := map[string]bool{st.Owner.TableName(): true}
	for name := range l.tables.byName {
		tables[name] = true
	}
	for _, a := range st.Announced {
		if a.Table != "" {
			tables[a.Table] = true
		}
	}
	for _, d := range append(slices.Clone(st.History), decidedOrNone(st)...) {
		for _, t := range d.Txns {
			tables[t.Table] = true
		}
	}
	tags = map[string]bool{}
	for table := range tables {
		db, name, err := checkpoint.SplitTable(table)
		if err != nil {
			continue
		}
		if !slices.Contains(dbs, db) {
			dbs = append(dbs, db)
		}
		tags[label.TableTag(db, name)] = true
		tags[label.HashTableTag(db, name)] = true
	}
	slices.Sort(dbs)
	return dbs, tags
}

// scopeLabel parses the label of running txn t and reports whether it is
// a label of st's prefix and scope for one of the tables tags names. why
// prefixes the debug lines of the txns it leaves out.
func (l *Loader) scopeLabel(st *checkpoint.State, tags map[string]bool, db string, t doris.Transaction, why string) (label.Label, bool) {
	if !strings.HasPrefix(t.Label, st.Owner.Job+":") {
		return label.Label{}, false
	}
	p, err := label.Parse(t.Label)
	switch {
	case err != nil || p.Prefix != st.Owner.Job:
		l.log.Debug(why+": running txn under the prefix with a label doris-sink does not build",
			"db", db, "label", t.Label, "txn_id", t.ID, "state", t.Status)
	case !tags[p.TableTag]:
		l.log.Debug(why+": running txn of a table this store does not write (another store of the job)",
			"db", db, "label", t.Label, "txn_id", t.ID, "state", t.Status)
	case p.Scope != st.Owner.Writer:
		l.log.Debug(why+": running txn of another scope of the prefix (another writer)",
			"db", db, "label", t.Label, "txn_id", t.ID, "state", t.Status, "scope", p.Scope)
	default:
		return p, true
	}
	return label.Label{}, false
}

// runningTxns lists the PREPARE and PRECOMMITTED txns of db under the
// job's prefix: by status when the inspector can, else by label LIKE.
func (l *Loader) runningTxns(ctx context.Context, db, job string) ([]doris.Transaction, error) {
	var out []doris.Transaction
	keep := func(ts []doris.Transaction) {
		for _, t := range ts {
			if (t.Status == doris.TxnPrepare || t.Status == doris.TxnPrecommitted) && strings.HasPrefix(t.Label, job+":") {
				out = append(out, t)
			}
		}
	}
	if sl, ok := l.inspect.(statusLister); ok {
		for _, s := range []doris.TxnStatus{doris.TxnPrepare, doris.TxnPrecommitted} {
			ts, err := sl.TransactionsByStatus(ctx, db, s)
			if err != nil {
				return nil, err
			}
			keep(ts)
		}
		return out, nil
	}
	// % is the only LIKE wildcard in Doris (docs/doris-facts.md §6.2); the
	// emulator also takes _ as one: keep filters the prefix again.
	ts, err := l.inspect.TransactionsByLabelLike(ctx, db, job+"%")
	if err != nil {
		return nil, err
	}
	keep(ts)
	return out, nil
}

// maybeSweep sweeps (sweep) when Config.SweepInterval has passed since the
// last sweep. It runs at a checkpoint boundary: the previous checkpoint is
// decided and the next one has no load begun.
func (l *Loader) maybeSweep(ctx context.Context) {
	if now := l.clock.Now(); !l.lastSweep.IsZero() && now.Sub(l.lastSweep) < l.cfg.SweepInterval {
		return
	}
	_ = l.sweep(ctx, "checkpoint boundary") // logged by sweep; the job goes on
}

// sweep aborts, by txn id, the zombie txns of this store's scope: the
// PREPARE and PRECOMMITTED txns of its prefix, scope and tables (the
// tables rule of checkSecondWriter) whose checkpoint id is at or below the
// last decided checkpoint and that the state does not decide (their txn
// id is no txn of State.Decided). Such a txn was begun under a label that
// nobody will ever decide: a fenced process (a zombie) began or
// precommitted it after its successor had recovered the label (aborted it,
// or found it UNKNOWN and unannounced it), or it is a heal attempt of a
// process that died. Left alone it would hold a running-txn slot until
// Doris's precommit timeout, and make the next start's checkSecondWriter
// look at it. It runs after each Recover, at most once per
// Config.SweepInterval at a checkpoint boundary (maybeSweep), in a healthy
// Close, and when the caller asks (Sweep), always on the caller's
// goroutine: never while a checkpoint is being decided. Exactly-
// once only, and only with a TxnInspector (nothing is listed without one).
//
// Why each candidate is safe to abort, and what is never one:
//
//   - The open checkpoint (Loader.cur): its id is above the last decision,
//     so its txns are never candidates; the one exception is a heal, whose
//     attempt reuses the decided id: txns of the checkpoint being written
//     are skipped whatever their id.
//   - The decided checkpoint, committed or not: its txns are in
//     State.Decided by txn id and are skipped, also while its background
//     commit runs (the sweep reads the state the commit updates, and skips
//     by id, never by label). A decision the sweep has not seen cannot
//     exist: decisions are made on this goroutine.
//   - Heals: a heal's decision replaces the aborted txns of the decided
//     checkpoint by new ones, so the replaced txns (ABORTED, not listed)
//     and any other txn of the healed labels that is not the new decision
//     (a heal attempt of a dead process) are exactly what may be swept.
//   - Operator resolutions (State.Resolved) resolve a decided txn whose
//     label Doris forgot; a running txn under such a label now is another
//     txn, never the resolved one: it is swept like any undecided txn
//     (assumed visible: its rows would load twice; assumed aborted: the
//     heal that follows loads them under its own txn).
//   - Older decisions (State.History) were committed before the next
//     decision (docs/design.md §2 invariant 3): their txns are VISIBLE and
//     never listed.
//   - A txn above the last decision is never touched: it may be the
//     owner's own open checkpoint or a real second writer (checkSecondWriter
//     refuses the latter at the next start).
//   - A sweeping process that is itself fenced and does not know it yet
//     sweeps with a stale state: the only txn of its successor it can
//     take for a zombie's is one decided under an id at or below its own
//     last decision, i.e. a heal of that checkpoint. The successor's
//     commit then answers aborted and it heals again (the recovery path
//     of any decided txn Doris aborted): liveness, never a duplicate, since
//     the sweep only aborts.
//
// Each abort is one request, never retried here: a failed abort is logged,
// counted (SweepStats.Failed) and retried by the next sweep. An abort
// answered "already aborted" or "not found" (the txn ended between the
// listing and the abort) is not counted; one answered "already committed"
// means someone committed an undecided txn of this scope (a second
// writer): it is logged as an error and counted as failed. A listing that
// fails is logged once per sweep and per database; the job goes on.
func (l *Loader) sweep(ctx context.Context, why string) error {
	l.lastSweep = l.clock.Now()
	if l.inspect == nil || l.cfg.Guarantee != ExactlyOnce || l.crashed.Load() {
		return nil
	}
	l.smu.Lock()
	st := l.state // replaced, never mutated, by save
	l.smu.Unlock()
	if st == nil || st.Decided == nil {
		return nil
	}
	last := st.Decided.ID
	decided := map[int64]bool{}
	for _, t := range st.Decided.Txns {
		decided[t.TxnID] = true
	}
	var writing uint64
	if l.cur != nil {
		writing = l.cur.id
	}
	dbs, tags := l.scopeTables(st)
	var errs []error
	for _, db := range dbs {
		txns, err := l.runningTxns(ctx, db, st.Owner.Job)
		if err != nil {
			l.log.Warn("zombie sweep: cannot list the job's running txns; not swept (next sweep retries)",
				"db", db, "trigger", why, "err", err)
			errs = append(errs, fmt.Errorf("zombie sweep: list the running txns of job %s in db %s: %w", st.Owner.Job, db, err))
			continue
		}
		for _, t := range txns {
			p, ok := l.scopeLabel(st, tags, db, t, "zombie sweep")
			if !ok || p.Checkpoint > last || p.Checkpoint == writing || decided[t.ID] {
				continue
			}
			l.abortZombie(ctx, db, t, p, last, why)
		}
	}
	return errors.Join(errs...)
}

// Sweep runs the zombie sweep now (see Config.SweepInterval; the Loader
// also sweeps after each Recover and at checkpoint boundaries): it aborts,
// by txn id, every PREPARE or PRECOMMITTED txn of this store's prefix,
// scope and tables whose checkpoint is at or below the last decided one
// and that the store does not decide. A caller whose source is idle (no
// checkpoint boundary for long) may call it between Writes, from the
// goroutine that uses the Loader; the open checkpoint's txns are never
// touched. Each abort is tried once: failures are logged and counted
// (SweepStats.Failed), and retried by the next sweep. It returns the
// listing failures (the Loader stays usable), or the error that makes the
// Loader unusable (ErrNeedRecover before Recover). Without a TxnInspector,
// or at-least-once, it does nothing.
func (l *Loader) Sweep(ctx context.Context) error {
	if err := l.usable(); err != nil {
		return err
	}
	return l.sweep(ctx, "caller")
}

// SweepEvery is Config.SweepInterval: how often an idle caller (the Kafka
// Connector with no record pending) calls Sweep.
func (l *Loader) SweepEvery() time.Duration { return l.cfg.SweepInterval }

// abortZombie aborts zombie txn t of checkpoint p.Checkpoint by its id
// (sweep), once.
func (l *Loader) abortZombie(ctx context.Context, db string, t doris.Transaction, p label.Label, last uint64, why string) {
	attrs := []any{"db", db, "label", t.Label, "txn_id", t.ID, "state", t.Status, "checkpoint", p.Checkpoint,
		"last_decided", last, "trigger", why}
	err := l.client.AbortTxn(ctx, db, t.ID)
	switch {
	case err == nil:
		l.sweeps.Aborted.Add(1)
		l.log.Warn("zombie sweep: aborted an undecided txn of this scope: its checkpoint is at or below the last "+
			"decided one and the store does not decide it (a fenced process began it after its successor "+
			"recovered the label), so nothing will ever commit it", attrs...)
	case errors.Is(err, doris.ErrTxnAlreadyAborted), errors.Is(err, doris.ErrTxnNotFound):
		l.log.Info("zombie sweep: txn ended before its abort", append(attrs, "err", err)...)
	case errors.Is(err, doris.ErrTxnAlreadyCommitted):
		l.sweeps.Failed.Add(1)
		l.log.Error("zombie sweep: an undecided txn of this scope was committed by someone else (a second writer "+
			"uses this job's prefix and scope?): its rows may be loaded twice; run `doris-sink verify`",
			append(attrs, "err", err)...)
	default:
		l.sweeps.Failed.Add(1)
		l.log.Warn("zombie sweep: abort failed; the next sweep retries it", append(attrs, "err", err)...)
	}
}
