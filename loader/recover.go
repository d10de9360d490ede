package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Recover brings every decided and announced label to a final state
// (docs/design.md §2 invariant 4, the recovery table) and returns the source
// position to resume from: the end of the last decided checkpoint, or its
// start when that checkpoint's transaction was lost and is being healed;
// nil for a new store. Read nothing from the source before it returns.
//
//   - decided, store says committed: done, no lookup.
//   - decided, VISIBLE/COMMITTED: marked committed.
//   - decided, PRECOMMITTED: committed.
//   - decided, ABORTED (e.g. "timeout by txn manager"): healed: the next
//     checkpoint reuses its id and label (an aborted label is reusable,
//     docs/doris-facts.md §4) and the returned position is its start; the caller
//     replays [start, end).
//   - decided, UNKNOWN (label expired): *UnresolvedError until the operator
//     runs ResolveAssume.
//   - announced, PREPARE/PRECOMMITTED: aborted by label.
//   - announced, ABORTED/UNKNOWN: nothing.
//   - announced, VISIBLE/COMMITTED: *FencingError.
//
// Evidence (docs/design.md §6): the decision carries the load's counters
// (checkpoint.Decision.Counts) and every ledger entry of the checkpoint is
// written from it. A process killed between a store write and its ledger
// append leaves the entry out; Recover appends it: the "decided" (or
// "healed") entry of a decided, uncommitted checkpoint, the "committed"
// entry of one the store marks committed. A decision saved by an older
// doris-sink has no counters: its entries then say the counts are unknown.
//
// With AtLeastOnce nothing is looked up: the position is the end of the
// last saved checkpoint and the next checkpoint gets a fresh id (or, after
// an in-process failure whose load surely did not commit, the failed
// checkpoint's id again).
//
// Recover first waits for a background commit and abandons an open
// checkpoint. It may be called again after any error.
func (l *Loader) Recover(ctx context.Context) (json.RawMessage, error) {
	if l.crashed.Load() {
		return nil, ErrCrashed
	}
	if l.closed {
		return nil, ErrClosed
	}
	l.recovered = false
	if err := l.quiesce(ctx); err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	if l.crashed.Load() {
		return nil, ErrCrashed
	}
	st, err := l.cfg.Store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	if want := l.cfg.owner(); st.Owner != want {
		return nil, fmt.Errorf("recover: %w", &checkpoint.OwnerError{Stored: st.Owner, Config: want})
	}
	if err := l.checkLedgerMatchesStore(st); err != nil {
		return nil, fmt.Errorf("recover: %w", err)
	}
	l.smu.Lock()
	l.state = st
	l.smu.Unlock()
	var pos json.RawMessage
	if l.cfg.Guarantee == AtLeastOnce {
		pos, err = l.recoverAtLeastOnce(ctx, st)
	} else {
		pos, err = l.recoverExactlyOnce(ctx, st)
	}
	if err != nil {
		return nil, l.crashErr("recover", err)
	}
	l.pos, l.first = pos, nil
	l.broken = nil
	l.recovered = true
	l.watch = newCommitWatch()
	return pos, nil
}

// quiesce waits for the background commit and abandons the open load,
// aborting its label (it was never decided). If ctx ends first the commit
// stays pending (a later Recover or Close waits for it).
func (l *Loader) quiesce(ctx context.Context) error {
	if pc := l.pending; pc != nil {
		select {
		case <-pc.done:
		case <-ctx.Done():
			return fmt.Errorf("wait for the commit of checkpoint %d: %w", pc.d.ID, ctx.Err())
		}
		l.pending = nil
	}
	if a := l.cur; a != nil && a.s != nil {
		a.s.abandon()
		a.s = nil
		if err := l.ops.abortLabel(ctx, l.cfg.DB, a.label); err != nil {
			l.log.Warn("recover: abort open load", "label", a.label, "err", err)
		}
	}
	return nil
}

func (l *Loader) knob(lbl string, st doris.TxnStatus, action string) {
	l.log.Info("recover label", "label", lbl, "state", st, "action", action)
	if l.knobs.AfterRecoverLabel != nil {
		l.knobs.AfterRecoverLabel(lbl, st, action)
	}
}

func (l *Loader) recoverExactlyOnce(ctx context.Context, st *checkpoint.State) (json.RawMessage, error) {
	// Announced, undecided labels: abort what runs, refuse what is visible.
	var resolved []uint64
	for _, a := range st.Announced {
		s, err := l.ops.lookup(ctx, l.cfg.DB, a.Label)
		if err != nil {
			return nil, fmt.Errorf("recover announced checkpoint %d: %w", a.ID, err)
		}
		switch s {
		case doris.TxnPrepare, doris.TxnPrecommitted:
			if err := l.ops.abortLabel(ctx, l.cfg.DB, a.Label); err != nil {
				return nil, fmt.Errorf("recover announced checkpoint %d: %w", a.ID, err)
			}
			l.knob(a.Label, s, "abort")
			l.evidence(ledger.EventAborted, checkpoint.Decision{ID: a.ID, Label: a.Label}, doris.TxnAborted,
				"recovery: announced, undecided label was "+string(s))
		case doris.TxnAborted, doris.TxnUnknown:
			l.knob(a.Label, s, "none")
		default: // VISIBLE, COMMITTED
			l.knob(a.Label, s, "fencing")
			return nil, &FencingError{Label: a.Label, State: string(s)}
		}
		resolved = append(resolved, a.ID)
	}

	// The decided checkpoint.
	d := st.Decided
	l.repairEvidence(d)
	heal, markCommitted := false, false
	var state doris.TxnStatus
	if d != nil && !d.Committed {
		if d.Empty {
			markCommitted = true
		} else {
			s, err := l.ops.lookup(ctx, l.cfg.DB, d.Label)
			if err != nil {
				return nil, fmt.Errorf("recover decided checkpoint %d: %w", d.ID, err)
			}
			state = s
			switch s {
			case doris.TxnVisible, doris.TxnCommitted:
				markCommitted = true
				l.knob(d.Label, s, "done")
			case doris.TxnPrecommitted:
				err := l.ops.commit(ctx, l.cfg.DB, d.Label, d.TxnID)
				var ae *AbortedError
				switch {
				case err == nil:
					markCommitted, state = true, doris.TxnVisible
					l.knob(d.Label, s, "commit")
				case errors.Is(err, doris.ErrSchemaIncompatible):
					// Doris refuses the commit for good: the table's schema
					// changed after this partial-update load was planned
					// (docs/doris-facts.md §13). Abort it and replay the range
					// into the same label, planned under the new schema.
					if err := l.ops.abortLabel(ctx, l.cfg.DB, d.Label); err != nil {
						return nil, fmt.Errorf("recover decided checkpoint %d: %w", d.ID, err)
					}
					l.evidence(ledger.EventAborted, *d, doris.TxnAborted, "decided txn refused at commit: the table's schema "+
						"changed after the load was planned; Recover heals it")
					heal = true
					l.knob(d.Label, s, "heal")
				case errors.As(err, &ae), errors.Is(err, doris.ErrTxnNotFound):
					// The decided txn is aborted (or, aborted, then cleaned
					// from Doris): what is precommitted is an undecided heal
					// attempt, since only a heal reuses a decided label and
					// only after finding it ABORTED. Abort it and heal again.
					if err := l.ops.abortLabel(ctx, l.cfg.DB, d.Label); err != nil {
						return nil, fmt.Errorf("recover decided checkpoint %d: %w", d.ID, err)
					}
					heal = true
					l.knob(d.Label, s, "heal")
				default:
					return nil, fmt.Errorf("recover decided checkpoint %d: %w", d.ID, err)
				}
			case doris.TxnPrepare:
				// Only a heal attempt reuses a decided label: abort it.
				if err := l.ops.abortLabel(ctx, l.cfg.DB, d.Label); err != nil {
					return nil, fmt.Errorf("recover decided checkpoint %d: %w", d.ID, err)
				}
				heal = true
				l.knob(d.Label, s, "heal")
			case doris.TxnAborted:
				heal = true
				l.knob(d.Label, s, "heal")
			default: // UNKNOWN
				if r := assumedAborted(st, d); r != nil {
					heal = true
					l.knob(d.Label, s, "heal")
				} else {
					l.knob(d.Label, s, "unresolved")
					now := l.clock.Now()
					return nil, &UnresolvedError{CheckpointID: d.ID, Label: d.Label, TxnID: d.TxnID, DecidedAt: d.DecidedAt,
						Age: now.Sub(d.DecidedAt), Start: d.Start, End: d.End}
				}
			}
		}
	}

	if len(resolved) > 0 || markCommitted {
		now := l.clock.Now()
		err := l.save(ctx, func(s *checkpoint.State) error {
			for _, id := range resolved {
				s.Unannounce(id)
			}
			if markCommitted {
				s.Decided.Committed, s.Decided.CommittedAt = true, now
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("recover: save: %w", err)
		}
		if markCommitted && !d.Empty {
			c := *d
			c.Committed, c.CommittedAt = true, now
			l.evidence(ledger.EventCommitted, c, state, "recovery"+countsUnknown(d))
		}
	}

	l.smu.Lock()
	nextID := l.state.NextID
	l.smu.Unlock()
	if heal {
		l.log.Warn("recover: healing checkpoint: replay its range into the same label", "id", d.ID, "label", d.Label,
			"start", posString(d.Start), "end", posString(d.End))
		l.cur = &attempt{id: d.ID, label: d.Label, heal: true, healed: d.Healed, announced: true}
		return d.Start, nil
	}
	lbl, err := st.Owner.Label(nextID)
	if err != nil {
		return nil, err
	}
	l.cur = &attempt{id: nextID, label: lbl}
	if d == nil {
		return nil, nil
	}
	return d.End, nil
}

// assumedAborted returns the operator's "aborted" resolution of d made
// after d was decided, nil if none.
func assumedAborted(st *checkpoint.State, d *checkpoint.Decision) *checkpoint.Resolution {
	for i := len(st.Resolved) - 1; i >= 0; i-- {
		r := &st.Resolved[i]
		if r.CheckpointID == d.ID && r.Assumed == checkpoint.ResolvedAborted && !r.At.Before(d.DecidedAt) {
			return r
		}
	}
	return nil
}

// recoverAtLeastOnce: no lookups; the next checkpoint gets a fresh id, or
// the id of the checkpoint that failed in this process before its load
// could have committed (its label is reused).
func (l *Loader) recoverAtLeastOnce(ctx context.Context, st *checkpoint.State) (json.RawMessage, error) {
	keep := l.retryID
	var ann checkpoint.Announcement
	err := l.save(ctx, func(s *checkpoint.State) error {
		var kept *checkpoint.Announcement
		for _, a := range s.Announced {
			if a.ID == keep {
				kept = &a
				continue
			}
			s.Unannounce(a.ID)
		}
		if kept != nil {
			ann = *kept
			return nil
		}
		var err error
		ann, err = s.Announce(l.clock.Now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recover: save: %w", err)
	}
	l.cur = &attempt{id: ann.ID, label: ann.Label, announced: true}
	if st.Decided == nil {
		return nil, nil
	}
	l.repairEvidence(st.Decided)
	return st.Decided.End, nil
}

// resolveAtLeastOnce settles an ambiguous non-2PC load by its label: if it
// is VISIBLE or COMMITTED this attempt's rows landed, and its txn id is
// read from a probe (an empty load of the same label answers Label Already
// Exists with the holder's txn id, docs/doris-facts.md §2.5, §11.7); if it is
// running it is aborted; the checkpoint then fails.
func (l *Loader) resolveAtLeastOnce(ctx context.Context, a *attempt, cause error) (*doris.LoadResult, error) {
	st, err := l.ops.lookup(ctx, l.cfg.DB, a.label)
	if err != nil {
		a.maybeLoaded = true
		return nil, errors.Join(cause, err)
	}
	switch st {
	case doris.TxnVisible, doris.TxnCommitted:
		req := loadRequest(l.target, a.label, false)
		_, perr := l.client.StreamLoad(ctx, req, nil)
		var le *doris.LoadError
		if errors.As(perr, &le) && le.Result != nil && le.Result.ExistingTxnID > 0 {
			return &doris.LoadResult{TxnID: le.Result.ExistingTxnID, Label: a.label, Status: doris.StatusSuccess}, nil
		}
		a.maybeLoaded = true
		return nil, errors.Join(cause, fmt.Errorf("label %s is %s but its txn id could not be read: %v", a.label, st, perr))
	case doris.TxnPrepare, doris.TxnPrecommitted:
		if err := l.ops.abortLabel(ctx, l.cfg.DB, a.label); err != nil {
			return nil, errors.Join(cause, err)
		}
	}
	return nil, cause
}

// checkLedgerMatchesStore refuses a brand-new store beside a ledger that
// already holds evidence: the checkpoint file was deleted or replaced, and
// starting afresh would re-read the source from its start and load it twice.
func (l *Loader) checkLedgerMatchesStore(st *checkpoint.State) error {
	if l.ledger == nil || st.Decided != nil || len(st.Announced) > 0 || st.NextID > 1 {
		return nil
	}
	fi, err := os.Stat(l.ledger.Path())
	if err != nil {
		return fmt.Errorf("check ledger %s: %w", l.ledger.Path(), err)
	}
	if fi.Size() > 0 {
		return fmt.Errorf("%w: ledger %s already holds %d bytes of evidence: "+
			"the store was deleted or replaced; restore it (or move the ledger away to start a new job on purpose)",
			ErrStoreReset, l.ledger.Path(), fi.Size())
	}
	return nil
}
