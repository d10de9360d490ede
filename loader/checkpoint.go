package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Checkpoint ends the current checkpoint at source position end (opaque
// JSON, e.g. {"orders/0": 1234}) and starts the next one (docs/design.md §2,
// one cycle): the Stream Load is finished and Doris precommits it; the
// commit of the previous checkpoint is awaited (invariant 3); the decision
// (label, txn id, start, end) and the announcement of the next label are
// saved durably (invariant 2); the commit then runs in the background
// while the next checkpoint streams. A checkpoint without rows is decided
// Empty, without a transaction.
//
// An error wrapping ErrNeedRecover means this checkpoint was not decided
// (its txns were aborted) or its bookkeeping failed: call Recover and
// rewind to the position it returns. With AtLeastOnce the load is a
// non-2PC load, committed when it returns; the position is saved after.
//
// The decision records the load's counters (Doris's row counters, bytes,
// attempts; checkpoint.Decision.Counts), so it carries its own evidence:
// the ledger's entry for it is appended right after the decision is
// durable, before the commit starts, and Recover appends it again from the
// store if a crash came between the two writes.
func (l *Loader) Checkpoint(ctx context.Context, end json.RawMessage) error {
	return l.CheckpointWith(ctx, end, CheckpointInfo{})
}

// CheckpointInfo is what the caller knows about a checkpoint's source
// records beyond the rows it wrote. The zero value records nothing.
type CheckpointInfo struct {
	// DeadLettered counts the checkpoint's source records that were not
	// converted to rows but sent to a dead-letter topic (docs/design.md §5). It
	// is recorded in the decision (checkpoint.LoadCounts.DeadLettered) and
	// the checkpoint's ledger entries (dead_lettered, docs/design.md §6). Must
	// not be negative.
	DeadLettered int64
}

// CheckpointWith is Checkpoint, recording info in the checkpoint's ledger
// entries (decided, committed). An invalid info is refused before anything
// happens, like an invalid end.
func (l *Loader) CheckpointWith(ctx context.Context, end json.RawMessage, info CheckpointInfo) error {
	if err := l.usable(); err != nil {
		return err
	}
	if len(end) > 0 && !json.Valid(end) {
		return fmt.Errorf("checkpoint: end position %q is not valid JSON", end)
	}
	if info.DeadLettered < 0 {
		return fmt.Errorf("checkpoint: dead-lettered count %d is negative", info.DeadLettered)
	}
	a := l.cur
	measured := l.measureLoads(a)
	if err := l.precommitAll(ctx, a); err != nil {
		return l.fail(ctx, a, "precommit", err, true)
	}
	for _, tl := range a.loads {
		if l.knobs.AfterPrecommit != nil {
			l.knobs.AfterPrecommit(a.id, tl.res)
		}
		if err := l.fire(ctx, FailAfterPrecommit); err != nil {
			return l.fail(ctx, a, "precommit", err, true)
		}
	}
	if err := l.checkHeal(a, end); err != nil {
		return l.fail(ctx, a, "heal", err, true)
	}
	if err := l.waitCommit(ctx); err != nil {
		return l.fail(ctx, a, "commit of previous", err, true)
	}
	if err := l.fire(ctx, FailBeforeDecide); err != nil {
		return l.fail(ctx, a, "decide", err, true)
	}
	now := l.clock.Now()
	d, fresh := l.decision(a, end, now, info)
	var next checkpoint.Announcement
	owner := l.cfg.owner()
	err := l.save(ctx, func(st *checkpoint.State) error {
		if d.ID == 0 {
			ann, err := st.Announce(now)
			if err != nil {
				return err
			}
			d.ID, d.Label = ann.ID, ann.Label
		}
		st.Decide(d)
		var err error
		if next, err = st.Announce(now); err != nil {
			return err
		}
		// The tables of this checkpoint are likely written in the next:
		// announcing them here spares a store write at their first row.
		for _, t := range d.Txns {
			if t.Table != owner.TableName() || t.Sub != 0 {
				if _, err := st.AnnounceSub(next.ID, t.Table, t.Sub, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		// The write's outcome may be unknown: never abort a txn that may be
		// decided; Recover reads the store and finishes the job.
		return l.fail(ctx, a, "decide", err, false)
	}
	d.Sync(owner)
	for _, tl := range a.loads {
		tl.s = nil
	}
	l.retryID = 0
	// The ledger's decided entries (docs/design.md §6: fsync'd after decide)
	// precede the after-decide cut point. A crash between the save and
	// these appends loses only the entries: Recover writes them from d,
	// which the store holds with its counts.
	event := ledger.EventDecided
	if a.heal != nil {
		event = ledger.EventHealed
	}
	if d.Empty {
		l.evidence(ledger.EventCommitted, d, "", "empty checkpoint: no transaction"+skippedNote(a))
	}
	var ignored error
	for i, t := range d.Txns {
		if !fresh[keyOf(t)] {
			continue
		}
		tl := a.load(keyOf(t))
		dl := deadLetteredOf(&d, i)
		switch {
		case l.cfg.Guarantee == AtLeastOnce:
			l.txnEvidence(ledger.EventCommitted, &d, t, dl, doris.TxnVisible, "at-least-once load")
		case tl.ignored != nil:
			ignored = errors.Join(ignored, fmt.Errorf("table %s label %s (txn %d): %w", t.Table, t.Label, t.TxnID, tl.ignored))
			l.txnEvidence(ledger.EventCommitted, &d, t, dl, doris.TxnVisible,
				"two_phase_commit ignored: Doris committed the load without precommit")
		default:
			l.txnEvidence(event, &d, t, dl, doris.TxnPrecommitted, skippedNote(a))
		}
	}
	if err := l.fire(ctx, FailAfterDecide); err != nil {
		return l.fail(ctx, a, "after decide", err, false)
	}
	if l.knobs.AfterDecide != nil {
		l.knobs.AfterDecide(d.ID)
	}
	if l.knobs.AfterAnnounce != nil {
		l.knobs.AfterAnnounce(next.ID, next.Label)
	}
	l.pos = end
	if a.heal == nil {
		l.adjustSubLoads(a, measured)
	}
	l.cur = &attempt{id: next.ID, label: next.Label, announced: true, started: l.clock.Now()}
	if !d.Committed && l.cfg.Guarantee == ExactlyOnce {
		l.startCommit(d)
	}
	if ignored == nil {
		// A checkpoint boundary: d is decided (its txns are in the state),
		// the next checkpoint has begun no load.
		l.maybeSweep(ctx)
	}
	if ignored != nil {
		l.broken = fmt.Errorf("checkpoint %d: %w: its rows are loaded and recorded as committed "+
			"(resume position %s), but exactly-once needs the two_phase_commit header to reach the BE: check the "+
			"proxies between doris-sink and Doris (nginx drops headers with underscores unless underscores_in_headers is on)",
			d.ID, ignored, posString(end))
		l.log.Error("stream load committed without precommit: stopping", "id", d.ID, "label", d.Label, "err", ignored)
		return l.broken
	}
	return nil
}

// skippedNote is the ledger note of a heal that skipped rows of tables
// whose txn was committed, "" otherwise.
func skippedNote(a *attempt) string {
	var n int64
	for _, c := range a.skipped {
		n += c
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("heal: %d rows of tables whose txn was committed skipped", n)
}

// precommitAll finishes the body of every load of a, in parallel, and
// records Doris's answers (tableLoad.res). A load Doris committed without
// precommit (exactly-once, doris.ErrTwoPhaseCommitIgnored) is recorded as
// such (tableLoad.ignored): aborting it is impossible and a replay would
// load its rows twice. The error names every table that failed.
func (l *Loader) precommitAll(ctx context.Context, a *attempt) error {
	errs := make([]error, len(a.loads))
	parallel(len(a.loads), func(i int) {
		tl := a.loads[i]
		res, err := l.finish(ctx, tl)
		var le *doris.LoadError
		if l.cfg.Guarantee == ExactlyOnce && errors.Is(err, doris.ErrTwoPhaseCommitIgnored) &&
			errors.As(err, &le) && le.Result != nil {
			res, tl.ignored, err = le.Result, err, nil
		}
		if err == nil && l.cfg.Guarantee == AtLeastOnce {
			tl.maybeLoaded = true // a non-2PC load is committed when it returns
		}
		if err != nil {
			errs[i] = fmt.Errorf("table %s%s label %s: %w", tl.tt.name, subNote(tl), tl.label, err)
			return
		}
		tl.res = res
	})
	return errors.Join(errs...)
}

// decision builds the decision of a ending at end: one txn per (table,
// sub-load) a loaded (a heal keeps the committed txns of the decision it
// heals and replaces the healed ones), the checkpoint's counts (the sum of
// its txns' and info's dead-lettered records). fresh names the txns a
// loaded. An empty checkpoint never announced gets id 0 (its id is handed
// out by the deciding write).
func (l *Loader) decision(a *attempt, end json.RawMessage, now time.Time, info CheckpointInfo) (checkpoint.Decision, map[txnKey]bool) {
	d := checkpoint.Decision{ID: a.id, Label: a.label, Start: l.start(), End: end, DecidedAt: now}
	fresh := make(map[txnKey]bool, len(a.loads))
	if h := a.heal; h != nil {
		for _, t := range h.d.Txns {
			if _, healed := h.tables[keyOf(t)]; !healed {
				d.Txns = append(d.Txns, t)
			}
		}
	}
	committed := l.cfg.Guarantee == AtLeastOnce
	for _, tl := range a.loads {
		t := checkpoint.Txn{Table: tl.tt.name, Sub: tl.sub, Subs: subsOf(tl.subs), Label: tl.label, TxnID: tl.res.TxnID,
			Counts: loadCounts(tl.res, tl.loads, 0)}
		if a.heal != nil {
			t.Healed = a.heal.tables[tl.key()] + 1
		}
		if committed || tl.ignored != nil {
			t.Committed, t.CommittedAt = true, now
		}
		d.Txns = append(d.Txns, t)
		fresh[keyOf(t)] = true
	}
	total := loadCounts(nil, 0, info.DeadLettered)
	for _, t := range d.Txns {
		if c := t.Counts; c != nil {
			total.RowsTotal += c.RowsTotal
			total.RowsLoaded += c.RowsLoaded
			total.RowsFiltered += c.RowsFiltered
			total.RowsUnselected += c.RowsUnselected
			total.Bytes += c.Bytes
			total.Attempts += c.Attempts
		}
		d.Healed = max(d.Healed, t.Healed)
	}
	d.Counts = total
	if len(d.Txns) == 0 {
		d.Empty, d.Committed, d.CommittedAt = true, true, now
		if !a.announced && a.heal == nil {
			// Nothing was announced for an empty checkpoint: give it its id
			// on the decide write.
			d.ID, d.Label = 0, ""
		}
	}
	d.Sync(l.cfg.owner())
	return d, fresh
}

// LastDecision returns the id and label of the last decided checkpoint in
// the store and whether it is known to be committed (the background commit
// may still be running); id 0 and "" before the first decision or before
// Recover read the store. Safe for concurrent use.
func (l *Loader) LastDecision() (id uint64, label string, committed bool) {
	l.smu.Lock()
	defer l.smu.Unlock()
	if l.state == nil || l.state.Decided == nil {
		return 0, "", false
	}
	d := l.state.Decided
	return d.ID, d.Label, d.Committed
}

// finish ends tl's body and returns Doris's answer, resolving Label
// Already Exists at begin (restartOnConflict) and, for at-least-once
// loads, an ambiguous answer by label lookup. Safe to run for several
// tables at once.
func (l *Loader) finish(ctx context.Context, tl *tableLoad) (*doris.LoadResult, error) {
	var res *doris.LoadResult
	call := func() error {
		var err error
		res, err = tl.s.finish(ctx)
		return err
	}
	err := l.restartOnConflict(ctx, tl, call(), call)
	if err == nil && res.TxnID <= 0 {
		err = fmt.Errorf("stream load %s: Doris answered %s without a txn id", tl.label, res.Status)
	}
	if err != nil && l.cfg.Guarantee == AtLeastOnce && doris.IsAmbiguous(err) {
		return l.resolveAtLeastOnce(ctx, tl, err)
	}
	if errors.Is(err, doris.ErrDataQuality) {
		err = explainFiltered(err)
	}
	return res, err
}

// waitCommit waits for the background commit of the previous checkpoint
// (docs/design.md §2 invariant 3) and returns its error.
func (l *Loader) waitCommit(ctx context.Context) error {
	pc := l.pending
	if pc == nil {
		return nil
	}
	select {
	case <-pc.done:
	case <-ctx.Done():
		return fmt.Errorf("wait for the commit of checkpoint %d: %w", pc.d.ID, ctx.Err())
	}
	l.pending = nil
	if pc.err != nil {
		return l.crashErr("commit", fmt.Errorf("commit of checkpoint %d: %w", pc.d.ID, pc.err))
	}
	return nil
}

// CommitFailed returns a channel that is closed when the background
// commit of a decided checkpoint fails for good: Doris aborted the txn
// (e.g. "timeout by txn manager", *AbortedError), or the retries gave up.
// The next Write or Checkpoint would then fail with ErrNeedRecover; a
// caller that is waiting for records (a quiet source) should instead call
// Recover at once, which heals an aborted decided checkpoint (replay its
// range, docs/design.md §2 recovery table) without waiting for traffic. Each
// successful Recover starts a new channel; a commit cut short by Close or
// a crash does not close it. Call it from the goroutine that uses the
// Loader.
func (l *Loader) CommitFailed() <-chan struct{} { return l.watch.ch }

// startCommit commits d in the background (docs/design.md §2 step 5).
func (l *Loader) startCommit(d checkpoint.Decision) {
	pc := &pendingCommit{d: d, done: make(chan struct{})}
	l.pending = pc
	watch := l.watch
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(pc.done)
		pc.err = l.commit(l.ctx, d)
		if pc.err != nil && !errors.Is(pc.err, ErrCrashed) {
			l.log.Error("commit failed", "id", d.ID, "label", d.Label, "txn_id", d.TxnID, "err", pc.err)
			if l.ctx.Err() == nil {
				watch.fail()
			}
		}
		if l.knobs.AfterCommit != nil {
			l.knobs.AfterCommit(d.ID, pc.err)
		}
	}()
}

// commit commits every uncommitted txn of decided checkpoint d, in
// parallel, with retries, then records the commits: one store write
// marking them (Decision.MarkCommitted), then one ledger entry per txn,
// with its counts. A txn that failed (aborted by Doris, retries given up)
// is left uncommitted; the error names it, the others are recorded.
func (l *Loader) commit(ctx context.Context, d checkpoint.Decision) error {
	var txns []checkpoint.Txn
	for _, t := range d.Txns {
		if !t.Committed {
			txns = append(txns, t)
		}
	}
	errs := make([]error, len(txns))
	parallel(len(txns), func(i int) { errs[i] = l.commitTxn(ctx, d, txns[i]) })
	if l.crashed.Load() {
		return ErrCrashed
	}
	var done []checkpoint.Txn
	for i, t := range txns {
		if errs[i] == nil {
			done = append(done, t)
		}
	}
	if len(done) > 0 {
		if err := l.markCommitted(ctx, d, done, doris.TxnVisible); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// commitTxn commits txn t of decided checkpoint d with retries.
func (l *Loader) commitTxn(ctx context.Context, d checkpoint.Decision, t checkpoint.Txn) error {
	ops := *l.ops
	ops.beforeAttempt = func(ctx context.Context, attempt int) error {
		if l.knobs.BeforeCommitAttempt != nil {
			l.knobs.BeforeCommitAttempt(d.ID, attempt)
		}
		if attempt == 1 {
			return l.fire(ctx, FailMidCommit)
		}
		return nil
	}
	ops.afterApplied = func(ctx context.Context) error { return l.fire(ctx, FailAfterCommitResponseLost) }
	db, _, _ := checkpoint.SplitTable(t.Table)
	err := ops.commit(ctx, db, t.Label, t.TxnID)
	if err != nil {
		var ie *IdentityError
		if errors.As(err, &ie) {
			ie.CheckpointID, ie.Table = d.ID, t.Table
		}
		err = l.crashErr("commit", err)
		var ae *AbortedError
		if errors.As(err, &ae) {
			l.txnEvidence(ledger.EventAborted, &d, t, 0, doris.TxnAborted, "decided txn aborted by Doris: "+ae.Reason+
				"; Recover heals it")
		}
		return err
	}
	if err := l.fire(ctx, FailAfterCommitBeforeLedger); err != nil {
		return l.crashErr("commit bookkeeping", fmt.Errorf("record commit of checkpoint %d table %s: %w", d.ID, t.Table, err))
	}
	return nil
}

// markCommitted records committed txns of checkpoint d in the store (if d
// is still the decided one) and the ledger, with their counts.
func (l *Loader) markCommitted(ctx context.Context, d checkpoint.Decision, txns []checkpoint.Txn, st doris.TxnStatus) error {
	now := l.clock.Now()
	owner := l.cfg.owner()
	err := l.save(ctx, func(s *checkpoint.State) error {
		if s.Decided != nil && s.Decided.ID == d.ID {
			for _, t := range txns {
				s.Decided.MarkSubCommitted(owner, t.Table, t.Sub, now)
			}
		}
		return nil
	})
	if err != nil {
		return l.crashErr("mark committed", fmt.Errorf("record commit of checkpoint %d: %w", d.ID, err))
	}
	for _, t := range txns {
		d.MarkSubCommitted(owner, t.Table, t.Sub, now)
	}
	for i, t := range d.Txns {
		if slices.ContainsFunc(txns, func(c checkpoint.Txn) bool { return keyOf(c) == keyOf(t) }) {
			l.txnEvidence(ledger.EventCommitted, &d, t, deadLetteredOf(&d, i), st, "")
		}
	}
	return nil
}

// deadLetteredOf is the dead-lettered count the ledger entry of d's i-th
// txn carries: the checkpoint's count on its first txn, 0 on the others
// (each dead letter is counted once). A heal keeps this place: when d's
// first txn is a committed one the heal kept, its entries (written when it
// was decided and committed) already carry the count and the heal writes
// none for it, so the healed txns' entries carry 0; when the first txn is
// healed, its healed entry carries the count again (verify keeps the
// latest entry of each txn).
func deadLetteredOf(d *checkpoint.Decision, i int) int64 {
	if i == 0 && d.Counts != nil {
		return d.Counts.DeadLettered
	}
	return 0
}
