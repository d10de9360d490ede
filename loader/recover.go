package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

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
//   - decided, VISIBLE/COMMITTED: committed again by the decided txn id;
//     "already committed" marks it committed. Refused as aborted or not
//     found, the label is held by another txn: *IdentityError (wrapping
//     checkpoint.ErrFenced), never "done".
//   - decided, PRECOMMITTED: committed by the decided txn id. Refused as
//     aborted or not found, the precommitted txn is another, undecided
//     attempt (a heal attempt or a second writer's load): it is aborted by
//     its own txn id and the decided txn healed.
//   - decided, PREPARE: likewise an undecided attempt, aborted by its id.
//   - decided, ABORTED (e.g. "timeout by txn manager"): healed: the next
//     checkpoint reuses its id and label (an aborted label is reusable,
//     docs/doris-facts.md §4) and the returned position is its start; the caller
//     replays [start, end).
//   - decided, UNKNOWN (label expired): *UnresolvedError until the operator
//     runs ResolveAssume.
//   - announced, PREPARE/PRECOMMITTED: aborted by label.
//   - announced, ABORTED/UNKNOWN: nothing.
//   - announced, VISIBLE/COMMITTED: *FencingError.
//   - before any of these, with a TxnInspector: a PREPARE/PRECOMMITTED
//     txn of the job's prefix and this store's scope under a label the
//     store neither announces nor decides, of a checkpoint above the last
//     decided one, is a *SecondWriterError (wrapping checkpoint.ErrFenced);
//     nothing is aborted.
//   - after all of these, with a TxnInspector: the zombie sweep (Sweep)
//     aborts by txn id every such txn at or below the last decided
//     checkpoint that the state does not decide (a fenced process's late
//     begin or precommit). Its failures are logged, never returned.
//
// The txn id holding a label is read with SHOW TRANSACTION (TxnInspector)
// or, without MySQL, from the Label Already Exists answer to an empty 2PC
// probe load of the label.
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
// checkpoint. It may be called again after any error, except the stop
// after a failed checkpoint in which Doris committed a load without
// precommit (doris.ErrTwoPhaseCommitIgnored, not ErrNeedRecover): it
// returns that error.
func (l *Loader) Recover(ctx context.Context) (json.RawMessage, error) {
	if l.crashed.Load() {
		return nil, ErrCrashed
	}
	if l.closed {
		return nil, ErrClosed
	}
	if l.stopped != nil {
		return nil, l.stopped
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
	// Every label of the state is final now: what runs of the scope at or
	// below the last decision and is not decided is a zombie's.
	_ = l.sweep(ctx, "recovery") // logged by sweep; the job goes on
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
	if a := l.cur; a != nil && a.open() {
		l.abandonLoads(ctx, a, "recover")
	}
	return nil
}

// abandonLoads abandons every open load of a and aborts its label (nothing
// of a was decided); a failed abort is logged: Recover aborts every
// announced label anyway. It returns the abort errors.
func (l *Loader) abandonLoads(ctx context.Context, a *attempt, why string) error {
	errs := make([]error, len(a.loads))
	parallel(len(a.loads), func(i int) {
		tl := a.loads[i]
		if tl.s == nil {
			return
		}
		tl.s.abandon()
		tl.s = nil
		if err := l.ops.abortLabel(ctx, tl.tt.t.DB, tl.label); err != nil {
			l.log.Warn(why+": abort open load", "table", tl.tt.name, "label", tl.label, "err", err)
			errs[i] = fmt.Errorf("abort open load of table %s: %w", tl.tt.name, err)
		}
	})
	a.loads, a.byTarget, a.last = nil, nil, nil
	return errors.Join(errs...)
}

func (l *Loader) knob(lbl string, st doris.TxnStatus, action string) {
	l.log.Info("recover label", "label", lbl, "state", st, "action", action)
	if l.knobs.AfterRecoverLabel != nil {
		l.knobs.AfterRecoverLabel(lbl, st, action)
	}
}

func (l *Loader) recoverExactlyOnce(ctx context.Context, st *checkpoint.State) (json.RawMessage, error) {
	owner := l.cfg.owner()
	if err := l.checkSecondWriter(ctx, st); err != nil {
		return nil, err
	}
	// Announced, undecided labels of every table: abort what runs, refuse
	// what is visible.
	var resolved []string
	for _, a := range st.Announced {
		table := a.Table
		if table == "" {
			table = owner.TableName()
		}
		db, _, err := checkpoint.SplitTable(table)
		if err != nil {
			return nil, fmt.Errorf("recover announced checkpoint %d: %w", a.ID, err)
		}
		s, err := l.ops.lookup(ctx, db, a.Label)
		if err != nil {
			return nil, fmt.Errorf("recover announced checkpoint %d table %s: %w", a.ID, table, err)
		}
		switch s {
		case doris.TxnPrepare, doris.TxnPrecommitted:
			if err := l.ops.abortLabel(ctx, db, a.Label); err != nil {
				return nil, fmt.Errorf("recover announced checkpoint %d table %s: %w", a.ID, table, err)
			}
			l.knob(a.Label, s, "abort")
			l.txnEvidence(ledger.EventAborted, &checkpoint.Decision{ID: a.ID}, checkpoint.Txn{Table: table, Sub: a.Sub, Label: a.Label},
				0, doris.TxnAborted, "recovery: announced, undecided label was "+string(s))
		case doris.TxnAborted, doris.TxnUnknown:
			l.knob(a.Label, s, "none")
		default: // VISIBLE, COMMITTED
			l.knob(a.Label, s, "fencing")
			return nil, &FencingError{Label: a.Label, State: string(s)}
		}
		resolved = append(resolved, a.Label)
	}

	// The decided checkpoint, txn by txn (docs/design.md §2 recovery table).
	d := st.Decided
	l.repairResolved(st)
	l.repairEvidence(d)
	heal := map[txnKey]int{}
	var committed []checkpoint.Txn
	states := map[txnKey]doris.TxnStatus{}
	markEmpty := false
	var unresolved error
	if d != nil && !d.Committed {
		if d.Empty {
			markEmpty = true
		}
		for _, t := range d.Txns {
			if t.Committed {
				continue
			}
			action, s, err := l.recoverTxn(ctx, st, d, t)
			if err != nil {
				var ue *UnresolvedError
				if !errors.As(err, &ue) {
					return nil, err
				}
				if unresolved == nil {
					unresolved = err // the first; the others are looked at again after it is resolved
				}
				continue
			}
			states[keyOf(t)] = s
			switch action {
			case "heal":
				heal[keyOf(t)] = t.Healed
			case "done", "commit":
				committed = append(committed, t)
			}
		}
	}

	if len(resolved) > 0 || len(committed) > 0 || markEmpty {
		now := l.clock.Now()
		err := l.save(ctx, func(s *checkpoint.State) error {
			for _, lbl := range resolved {
				s.UnannounceLabel(lbl)
			}
			for _, t := range committed {
				s.Decided.MarkSubCommitted(owner, t.Table, t.Sub, now)
			}
			if markEmpty {
				s.Decided.Committed, s.Decided.CommittedAt = true, now
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("recover: save: %w", err)
		}
		if len(committed) > 0 {
			c := d.Clone()
			for _, t := range committed {
				c.MarkSubCommitted(owner, t.Table, t.Sub, now)
			}
			for i, t := range c.Txns {
				if s, ok := states[keyOf(t)]; ok && t.Committed && slices.ContainsFunc(committed,
					func(x checkpoint.Txn) bool { return keyOf(x) == keyOf(t) }) {
					l.txnEvidence(ledger.EventCommitted, &c, t, deadLetteredOf(&c, i), s, "recovery"+countsUnknown(t))
				}
			}
		}
	}
	if unresolved != nil {
		return nil, unresolved
	}

	l.smu.Lock()
	nextID := l.state.NextID
	l.smu.Unlock()
	if len(heal) > 0 {
		l.log.Warn("recover: healing checkpoint: replay its range into the same labels of the tables whose txn was aborted",
			"id", d.ID, "label", d.Label, "tables", len(heal), "start", posString(d.Start), "end", posString(d.End))
		// The plan is the decision as saved above, not as loaded: the txns
		// this Recover committed stay committed in the heal's decision
		// (never committed, or counted in the ledger, a second time).
		l.smu.Lock()
		hd := l.state.Decided.Clone()
		l.smu.Unlock()
		l.cur = &attempt{id: d.ID, label: d.Label, announced: true, heal: &healPlan{d: hd, tables: heal}}
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

// recoverTxn brings txn t of decided checkpoint d to a final state and
// returns the action taken ("done", "commit", "heal") with the state Doris
// reported, or an *UnresolvedError when Doris no longer knows the label
// and no operator resolution covers it.
func (l *Loader) recoverTxn(ctx context.Context, st *checkpoint.State, d *checkpoint.Decision, t checkpoint.Txn) (string, doris.TxnStatus, error) {
	db, _, err := checkpoint.SplitTable(t.Table)
	if err != nil {
		return "", "", fmt.Errorf("recover decided checkpoint %d: %w", d.ID, err)
	}
	wrap := func(err error) error {
		return fmt.Errorf("recover decided checkpoint %d table %s label %s: %w", d.ID, t.Table, t.Label, err)
	}
	s, err := l.ops.lookup(ctx, db, t.Label)
	if err != nil {
		return "", "", wrap(err)
	}
	switch s {
	case doris.TxnVisible, doris.TxnCommitted, doris.TxnPrecommitted:
		// The label's newest txn is live; whether it is the decided one
		// only its txn id tells (docs/design.md §2, identity checks): the
		// decided txn is committed by id, and a commit by id of a txn
		// already COMMITTED or VISIBLE answers so, one ABORTED "already
		// aborted" (docs/doris-facts.md §3.3; Doris
		// DatabaseTransactionMgr.checkTransactionStateBeforeCommit), while
		// get_load_state is the state of the label's highest txn id
		// (DatabaseTransactionMgr.getLabelState).
		err := l.ops.commit(ctx, db, t.Label, t.TxnID)
		var ae *AbortedError
		var ie *IdentityError
		switch {
		case err == nil:
			if s == doris.TxnPrecommitted {
				l.knob(t.Label, s, "commit")
				return "commit", doris.TxnVisible, nil
			}
			l.knob(t.Label, s, "done")
			return "done", s, nil
		case errors.Is(err, doris.ErrSchemaIncompatible):
			// Doris refuses the commit for good: the table's schema
			// changed after this partial-update load was planned
			// (docs/doris-facts.md §13). Abort it (by its id: it is the
			// decided txn) and replay the range into the same label,
			// planned under the new schema.
			if err := l.ops.abortTxn(ctx, db, t.Label, t.TxnID); err != nil {
				return "", "", wrap(err)
			}
			l.txnEvidence(ledger.EventAborted, d, t, 0, doris.TxnAborted, "decided txn refused at commit: the table's schema "+
				"changed after the load was planned; Recover heals it")
			l.knob(t.Label, s, "heal")
			return "heal", s, nil
		case errors.As(err, &ae), errors.Is(err, doris.ErrTxnNotFound), errors.As(err, &ie):
			// The decided txn is aborted (or, aborted, then cleaned
			// from Doris): what holds the label is another txn.
			return l.recoverForeignHolder(ctx, d, t, s, ae == nil)
		default:
			return "", "", wrap(err)
		}
	case doris.TxnPrepare:
		// A decided txn was precommitted: a PREPARE txn of its label is
		// another one.
		return l.recoverForeignHolder(ctx, d, t, s, false)
	case doris.TxnAborted:
		// The newest txn of the label is ABORTED, so every one is (a live
		// txn refuses every later begin of its label, docs/doris-facts.md §4).
		l.knob(t.Label, s, "heal")
		return "heal", s, nil
	default: // UNKNOWN
		if r := assumedAborted(st, d, t.Label); r != nil {
			l.knob(t.Label, s, "heal")
			return "heal", s, nil
		}
		l.knob(t.Label, s, "unresolved")
		now := l.clock.Now()
		return "", s, &UnresolvedError{CheckpointID: d.ID, Table: t.Table, Label: t.Label, TxnID: t.TxnID,
			Txns: len(d.Txns), DecidedAt: d.DecidedAt,
			Age: now.Sub(d.DecidedAt), Start: d.Start, End: d.End}
	}
}

// recoverForeignHolder handles decided txn t of d whose label Doris holds
// (state s at lookup) under another txn than t.TxnID, which is not loaded:
// its commit by id answered aborted, or not found (notFound: aborted, then
// cleaned). docs/design.md §2, identity checks:
//
//   - the other txn is VISIBLE or COMMITTED: *IdentityError naming both
//     txn ids, never "done";
//   - it is PREPARE or PRECOMMITTED: an undecided attempt (a heal attempt,
//     or a second writer's load): it is aborted by its txn id, never by
//     label, and t is healed;
//   - no live txn holds the label any more: t is healed.
//
// The other txn's id comes from holder. Without a TxnInspector holder
// probes the label with an empty load, which begins a txn when the label
// is free; so when t was not found and the label was committed (the label
// may just have expired: its txn could have been t) nothing is probed and
// the *IdentityError has no found txn id.
func (l *Loader) recoverForeignHolder(ctx context.Context, d *checkpoint.Decision, t checkpoint.Txn,
	s doris.TxnStatus, notFound bool) (string, doris.TxnStatus, error) {
	wrap := func(err error) error {
		return fmt.Errorf("recover decided checkpoint %d table %s label %s txn %d: %w", d.ID, t.Table, t.Label, t.TxnID, err)
	}
	committed := s == doris.TxnVisible || s == doris.TxnCommitted
	identity := func(id int64, hs doris.TxnStatus) error {
		l.knob(t.Label, hs, "fencing")
		l.log.Error("recover: decided label committed under another txn", "id", d.ID, "table", t.Table, "label", t.Label,
			"decided_txn_id", t.TxnID, "found_txn_id", id, "state", hs)
		return &IdentityError{CheckpointID: d.ID, Table: t.Table, Label: t.Label, DecidedTxnID: t.TxnID,
			FoundTxnID: id, FoundState: hs}
	}
	if notFound && committed && l.inspect == nil {
		return "", "", identity(0, s)
	}
	db, _, err := checkpoint.SplitTable(t.Table)
	if err != nil {
		return "", "", wrap(err)
	}
	// A probe must not begin a txn under a label whose committed txn may
	// have been t and just expired: the label would then read ABORTED.
	id, hs, err := l.holder(ctx, t.Table, t.Label, notFound && committed)
	if err != nil {
		return "", "", wrap(fmt.Errorf("read the txn id holding the label: %w", err))
	}
	if id == t.TxnID && id != 0 {
		// The decided txn holds its label after its commit answered
		// aborted or not found: Doris changed under us; look again.
		return "", "", wrap(fmt.Errorf("label is %s under the decided txn itself, whose commit was refused; run Recover again", hs))
	}
	switch hs {
	case doris.TxnVisible, doris.TxnCommitted:
		return "", "", identity(id, hs)
	case doris.TxnPrepare, doris.TxnPrecommitted:
		if err := l.ops.abortTxn(ctx, db, t.Label, id); err != nil {
			return "", "", wrap(fmt.Errorf("abort undecided txn %d of the label: %w", id, err))
		}
		l.log.Warn("recover: aborted an undecided txn holding a decided label (a heal attempt or a second writer's load)",
			"id", d.ID, "table", t.Table, "label", t.Label, "decided_txn_id", t.TxnID, "aborted_txn_id", id, "state", hs)
	default: // ABORTED, UNKNOWN: no live txn holds the label now
		if notFound && committed {
			// Committed at lookup, gone now: the label expired in
			// between, and its txn may have been t.
			return "", "", wrap(fmt.Errorf("label was %s and is %s now (expired meanwhile?); run Recover again", s, hs))
		}
	}
	l.knob(t.Label, s, "heal")
	return "heal", s, nil
}

// assumedAborted returns the operator's "aborted" resolution of the txn
// labelled lbl of d, made after d was decided, nil if none.
func assumedAborted(st *checkpoint.State, d *checkpoint.Decision, lbl string) *checkpoint.Resolution {
	for i := len(st.Resolved) - 1; i >= 0; i-- {
		r := &st.Resolved[i]
		if r.CheckpointID == d.ID && r.Label == lbl && r.Assumed == checkpoint.ResolvedAborted && !r.At.Before(d.DecidedAt) {
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
		for _, a := range slices.Clone(s.Announced) {
			if a.ID == keep {
				if a.Table == s.Owner.TableName() || a.Table == "" {
					kept = &a
				}
				continue
			}
			s.UnannounceLabel(a.Label)
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
	l.repairResolved(st)
	l.repairEvidence(st.Decided)
	return st.Decided.End, nil
}

// resolveAtLeastOnce settles an ambiguous non-2PC load by its label: if it
// is VISIBLE or COMMITTED this attempt's rows landed, and its txn id is
// read from a probe (an empty load of the same label answers Label Already
// Exists with the holder's txn id, docs/doris-facts.md §2.5, §11.7); if it is
// running it is aborted; the checkpoint then fails.
func (l *Loader) resolveAtLeastOnce(ctx context.Context, tl *tableLoad, cause error) (*doris.LoadResult, error) {
	db := tl.tt.t.DB
	st, err := l.ops.lookup(ctx, db, tl.label)
	if err != nil {
		tl.maybeLoaded = true
		return nil, errors.Join(cause, err)
	}
	switch st {
	case doris.TxnVisible, doris.TxnCommitted:
		req := loadRequest(tl.tt.t, tl.label, false)
		_, perr := l.client.StreamLoad(ctx, req, nil)
		var le *doris.LoadError
		if errors.As(perr, &le) && le.Result != nil && le.Result.ExistingTxnID > 0 {
			return &doris.LoadResult{TxnID: le.Result.ExistingTxnID, Label: tl.label, Status: doris.StatusSuccess}, nil
		}
		tl.maybeLoaded = true
		return nil, errors.Join(cause, fmt.Errorf("label %s is %s but its txn id could not be read: %v", tl.label, st, perr))
	case doris.TxnPrepare, doris.TxnPrecommitted:
		if err := l.ops.abortLabel(ctx, db, tl.label); err != nil {
			return nil, errors.Join(cause, err)
		}
	}
	return nil, cause
}

// checkLedgerMatchesStore refuses a brand-new store beside a ledger that
// already holds evidence: the checkpoint file was deleted or replaced, and
// starting afresh would re-read the source from its start and load it twice.
// A ledger holding only table changes (RecordTableChange: a table created
// or altered before the first checkpoint was announced, then a crash) is
// no such evidence: nothing was loaded.
func (l *Loader) checkLedgerMatchesStore(st *checkpoint.State) error {
	if l.ledger == nil || st.Decided != nil || len(st.Announced) > 0 || st.NextID > 1 {
		return nil
	}
	fi, err := os.Stat(l.ledger.Path())
	if err != nil {
		return fmt.Errorf("check ledger %s: %w", l.ledger.Path(), err)
	}
	if fi.Size() > 0 && !onlyTableChanges(filepath.Dir(l.ledger.Path())) {
		return fmt.Errorf("%w: ledger %s already holds %d bytes of evidence: "+
			"the store was deleted or replaced; restore it (or move the ledger away to start a new job on purpose)",
			ErrStoreReset, l.ledger.Path(), fi.Size())
	}
	return nil
}

// onlyTableChanges reports whether the ledger in dir holds nothing but
// table_created and schema_changed entries (which belong to no
// checkpoint); an unreadable ledger is not.
func onlyTableChanges(dir string) bool {
	entries, torn, err := ledger.ReadFile(dir)
	if err != nil || torn != nil || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		if e.Event != ledger.EventTableCreated && e.Event != ledger.EventSchemaChanged {
			return false
		}
	}
	return true
}
