package loader

import (
	"context"
	"fmt"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// checkSecondWriter refuses to recover when Doris runs a txn (PREPARE or
// PRECOMMITTED) under this job's prefix and st's label scope whose label st
// neither announces nor decides (an uncommitted txn of the decided
// checkpoint) and whose checkpoint id is above the last decided one: it is
// not a leftover of this store, since every label is announced before its
// load begins and stays announced until Recover saw it aborted
// (docs/design.md §2 invariant 1), and ids are handed out in order. Such a
// txn belongs to a second writer using the job's prefix and scope, or the
// store was rolled back; it is never aborted here (*SecondWriterError).
//
// A txn of the scope at or below the last decision that st does not
// decide is no refusal: it is a zombie's leftover (a fenced process began
// or precommitted a label after its successor recovered it, or a dead
// process's heal attempt), and the sweep after recovery aborts it by txn
// id (Loader.sweep). A second writer whose ids run below this store's is
// swept in the same way: only the ids above the last decision tell it
// apart from a zombie.
//
// Labels of other scopes of the prefix belong to other writers (other
// members of a group) and are left alone. It runs before Recover aborts
// anything, with the state as loaded.
//
// Only labels of the tables the store writes are looked at (the owner's,
// the configured ones, and those its decisions and announcements name):
// another store of the same job name may write another table.
//
// It needs a TxnInspector (SHOW TRANSACTION WHERE LABEL LIKE); without one
// nothing is checked. A listing that fails is logged and skipped: the
// check detects a second writer, it is not what keeps a decision safe
// (commits and aborts of decided labels go by txn id).
func (l *Loader) checkSecondWriter(ctx context.Context, st *checkpoint.State) error {
	ti := l.inspect
	if ti == nil {
		return nil
	}
	known := map[string]bool{}
	for _, a := range st.Announced {
		known[a.Label] = true
	}
	var last uint64
	if d := st.Decided; d != nil {
		last = d.ID
		for _, t := range d.Txns {
			if !t.Committed {
				known[t.Label] = true
			}
		}
	}
	dbs, tags := l.scopeTables(st)
	prefix := st.Owner.Job + ":"
	for _, db := range dbs {
		// % is the only LIKE wildcard in Doris (docs/doris-facts.md §6.2);
		// the emulator also takes _ as one: filter the prefix again.
		txns, err := ti.TransactionsByLabelLike(ctx, db, prefix+"%")
		if err != nil {
			l.log.Warn("second-writer check: cannot list the job's running txns; not checked", "db", db,
				"pattern", prefix+"%", "err", err)
			continue
		}
		for _, t := range txns {
			if t.Status != doris.TxnPrepare && t.Status != doris.TxnPrecommitted {
				continue
			}
			if known[t.Label] {
				continue
			}
			p, ok := l.scopeLabel(st, tags, db, t, "second-writer check")
			if !ok {
				continue
			}
			if p.Checkpoint <= last {
				l.log.Info("second-writer check: undecided running txn at or below the last decision (a zombie's "+
					"leftover); the sweep after recovery aborts it", "db", db, "label", t.Label, "txn_id", t.ID,
					"state", t.Status, "checkpoint", p.Checkpoint, "last_decided", last)
				continue
			}
			return fmt.Errorf("recover: %w", &SecondWriterError{DB: db, Label: t.Label, TxnID: t.ID, State: t.Status, Scope: p.Scope})
		}
	}
	return nil
}

// decidedOrNone returns st's decided checkpoint as a one-element list, none
// when nothing is decided.
func decidedOrNone(st *checkpoint.State) []checkpoint.Decision {
	if st.Decided == nil {
		return nil
	}
	return []checkpoint.Decision{*st.Decided}
}
