package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
	d := checkpoint.Decision{ID: a.id, Label: a.label, Start: l.start(), End: end}
	var res *doris.LoadResult
	// ignored is set when Doris committed a load sent to be precommitted
	// (doris.ErrTwoPhaseCommitIgnored): its rows are visible already.
	var ignored error
	if a.s == nil {
		d.Empty = true
		if !a.announced && !a.heal {
			// Nothing was announced for an empty checkpoint: give it its id
			// on the decide write.
			d.ID, d.Label = 0, ""
		}
	} else {
		var err error
		res, err = l.finish(ctx, a)
		var le *doris.LoadError
		if l.cfg.Guarantee == ExactlyOnce && errors.Is(err, doris.ErrTwoPhaseCommitIgnored) &&
			errors.As(err, &le) && le.Result != nil {
			// Aborting is impossible and a replay would load the rows twice:
			// record them as decided and committed, then stop (below).
			res, ignored, err = le.Result, err, nil
		}
		if err == nil && l.cfg.Guarantee == AtLeastOnce {
			a.maybeLoaded = true // a non-2PC load is committed when it returns
		}
		if err != nil {
			return l.fail(ctx, a, "precommit", err, true)
		}
		d.TxnID = res.TxnID
		if l.knobs.AfterPrecommit != nil {
			l.knobs.AfterPrecommit(a.id, res)
		}
		if err := l.fire(ctx, FailAfterPrecommit); err != nil {
			return l.fail(ctx, a, "precommit", err, true)
		}
	}
	if err := l.waitCommit(ctx); err != nil {
		return l.fail(ctx, a, "commit of previous", err, true)
	}
	if err := l.fire(ctx, FailBeforeDecide); err != nil {
		return l.fail(ctx, a, "decide", err, true)
	}
	now := l.clock.Now()
	d.DecidedAt = now
	if a.heal {
		d.Healed = a.healed + 1
	}
	if d.Empty {
		d.Counts = loadCounts(nil, 0, info.DeadLettered)
	} else {
		d.Counts = loadCounts(res, a.loads, info.DeadLettered)
	}
	if d.Empty || l.cfg.Guarantee == AtLeastOnce || ignored != nil {
		d.Committed, d.CommittedAt = true, now
	}
	var next checkpoint.Announcement
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
		next, err = st.Announce(now)
		return err
	})
	if err != nil {
		// The write's outcome may be unknown: never abort a txn that may be
		// decided; Recover reads the store and finishes the job.
		return l.fail(ctx, a, "decide", err, false)
	}
	a.s = nil
	l.retryID = 0
	// The ledger's decided entry (docs/design.md §6: fsync'd after decide)
	// precedes the after-decide cut point. A crash between the save and
	// this append loses only the entry: Recover writes it from d, which
	// the store holds with its counts.
	event := ledger.EventDecided
	if a.heal {
		event = ledger.EventHealed
	}
	switch {
	case d.Empty:
		l.evidence(ledger.EventCommitted, d, "", "empty checkpoint: no transaction")
	case l.cfg.Guarantee == AtLeastOnce:
		l.evidence(ledger.EventCommitted, d, doris.TxnVisible, "at-least-once load")
	case ignored != nil:
		l.evidence(ledger.EventCommitted, d, doris.TxnVisible,
			"two_phase_commit ignored: Doris committed the load without precommit")
	default:
		l.evidence(event, d, doris.TxnPrecommitted, "")
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
	l.cur = &attempt{id: next.ID, label: next.Label, announced: true}
	if ignored != nil {
		l.broken = fmt.Errorf("checkpoint %d label %s (txn %d): %w: its rows are loaded and recorded as committed "+
			"(resume position %s), but exactly-once needs the two_phase_commit header to reach the BE: check the "+
			"proxies between doris-sink and Doris (nginx drops headers with underscores unless underscores_in_headers is on)",
			d.ID, d.Label, d.TxnID, ignored, posString(end))
		l.log.Error("stream load committed without precommit: stopping", "id", d.ID, "label", d.Label, "txn_id", d.TxnID)
		return l.broken
	}
	if !d.Empty && l.cfg.Guarantee == ExactlyOnce {
		l.startCommit(d)
	}
	return nil
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

// finish ends a's body and returns Doris's answer, resolving Label Already
// Exists at begin (restartOnConflict) and, for at-least-once loads, an
// ambiguous answer by label lookup.
func (l *Loader) finish(ctx context.Context, a *attempt) (*doris.LoadResult, error) {
	var res *doris.LoadResult
	call := func() error {
		var err error
		res, err = a.s.finish(ctx)
		return err
	}
	err := l.restartOnConflict(ctx, a, call(), call)
	if err == nil && res.TxnID <= 0 {
		err = fmt.Errorf("stream load %s: Doris answered %s without a txn id", a.label, res.Status)
	}
	if err != nil && l.cfg.Guarantee == AtLeastOnce && doris.IsAmbiguous(err) {
		return l.resolveAtLeastOnce(ctx, a, err)
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

// commit commits decided checkpoint d with retries, then records it: store
// (Committed) and ledger, with d's counts.
func (l *Loader) commit(ctx context.Context, d checkpoint.Decision) error {
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
	err := ops.commit(ctx, l.cfg.DB, d.Label, d.TxnID)
	if err != nil {
		err = l.crashErr("commit", err)
		var ae *AbortedError
		if errors.As(err, &ae) {
			l.evidence(ledger.EventAborted, d, doris.TxnAborted, "decided txn aborted by Doris: "+ae.Reason+
				"; Recover heals it")
		}
		return err
	}
	if err := l.fire(ctx, FailAfterCommitBeforeLedger); err != nil {
		return l.crashErr("commit bookkeeping", fmt.Errorf("record commit of checkpoint %d: %w", d.ID, err))
	}
	return l.markCommitted(ctx, d, doris.TxnVisible)
}

// markCommitted records a committed checkpoint in the store (if it is still
// the decided one) and the ledger, with d's counts.
func (l *Loader) markCommitted(ctx context.Context, d checkpoint.Decision, st doris.TxnStatus) error {
	now := l.clock.Now()
	err := l.save(ctx, func(s *checkpoint.State) error {
		if s.Decided != nil && s.Decided.ID == d.ID && !s.Decided.Committed {
			s.Decided.Committed, s.Decided.CommittedAt = true, now
		}
		return nil
	})
	if err != nil {
		return l.crashErr("mark committed", fmt.Errorf("record commit of checkpoint %d: %w", d.ID, err))
	}
	d.Committed, d.CommittedAt = true, now
	l.evidence(ledger.EventCommitted, d, st, "")
	return nil
}
