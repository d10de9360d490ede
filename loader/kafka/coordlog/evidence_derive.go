package coordlog

import (
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// transitionEvidence returns the evidence entries of a Save that moves the
// state from last to st (docs/design.md §7.3). They are derived from the
// states alone, so they ride in the transaction that makes st durable and
// exist exactly when it does:
//
//   - a new decision: one "decided" entry per txn (with its counts; the
//     checkpoint's dead-lettered count on the first), "committed" for a
//     txn already committed when decided (at-least-once, Doris ignoring
//     two_phase_commit), one "committed" entry without a txn for an empty
//     checkpoint;
//   - a new decision of the decided checkpoint (a heal): "healed" per txn
//     not committed;
//   - the commit mark (same decision, txns now committed): "committed" per
//     txn newly committed, with its commit time; a txn the previous
//     decision left uncommitted that the history shows committed is
//     recorded so too;
//   - each operator resolution st holds and last did not: "resolved".
func transitionEvidence(owner checkpoint.Owner, last, st *checkpoint.State, now time.Time) []ledger.Entry {
	var out []ledger.Entry
	var prev *checkpoint.Decision
	if last != nil && last.Decided != nil {
		p := last.Decided.Clone()
		p.Sync(owner)
		prev = &p
	}
	if st.Decided != nil {
		d := st.Decided.Clone()
		d.Sync(owner)
		switch decides(last, st) {
		case decidesNew:
			if prev != nil {
				for _, h := range st.History {
					if h.ID == prev.ID {
						hd := h.Clone()
						hd.Sync(owner)
						out = append(out, newlyCommitted(owner, prev, &hd, now)...)
					}
				}
			}
			if len(d.Txns) == 0 {
				e := decisionEntry(owner, &d, checkpoint.Txn{Label: d.Label}, ledger.EventCommitted, "", now)
				e.CommittedAt = d.CommittedAt
				if d.Counts != nil {
					e.DeadLettered = d.Counts.DeadLettered
				}
				e.Note = "empty checkpoint: no transaction"
				out = append(out, e)
				break
			}
			for i, t := range d.Txns {
				ev, state := ledger.EventDecided, doris.TxnPrecommitted
				if t.Committed {
					ev, state = ledger.EventCommitted, doris.TxnVisible
				}
				e := decisionEntry(owner, &d, t, ev, state, now)
				e.DeadLettered = deadLetteredAt(&d, i)
				out = append(out, e)
			}
		case decidesAgain:
			for i, t := range d.Txns {
				if t.Committed {
					continue
				}
				e := decisionEntry(owner, &d, t, ledger.EventHealed, doris.TxnPrecommitted, now)
				e.DeadLettered = deadLetteredAt(&d, i)
				out = append(out, e)
			}
		default:
			if prev != nil && prev.ID == d.ID {
				out = append(out, newlyCommitted(owner, prev, &d, now)...)
			}
		}
	}
	var known []checkpoint.Resolution
	if last != nil {
		known = last.Resolved
	}
	for _, r := range st.Resolved {
		if containsResolution(known, r) {
			continue
		}
		out = append(out, resolutionEntry(owner, st, r, now))
	}
	return out
}

// newlyCommitted returns the "committed" entries of the txns cur holds
// committed that prev did not (same checkpoint).
func newlyCommitted(owner checkpoint.Owner, prev, cur *checkpoint.Decision, now time.Time) []ledger.Entry {
	var out []ledger.Entry
	for i, t := range cur.Txns {
		if !t.Committed {
			continue
		}
		if p := prev.SubTxn(t.Table, t.Sub); p == nil || p.Committed || p.TxnID != t.TxnID {
			continue
		}
		e := decisionEntry(owner, cur, t, ledger.EventCommitted, doris.TxnVisible, now)
		e.CommittedAt = t.CommittedAt
		e.DeadLettered = deadLetteredAt(cur, i)
		out = append(out, e)
	}
	return out
}

// deadLetteredAt is the dead-lettered count the entry of d's i-th txn
// carries: the checkpoint's on its first txn, 0 on the others (the local
// ledger's rule, loader.deadLetteredOf).
func deadLetteredAt(d *checkpoint.Decision, i int) int64 {
	if i == 0 && d.Counts != nil {
		return d.Counts.DeadLettered
	}
	return 0
}

// decisionEntry is the entry of event about txn t of decision d.
func decisionEntry(owner checkpoint.Owner, d *checkpoint.Decision, t checkpoint.Txn, event string, state doris.TxnStatus,
	now time.Time) ledger.Entry {
	db, table := owner.DB, owner.Table
	if t.Table != "" {
		if x, y, err := checkpoint.SplitTable(t.Table); err == nil {
			db, table = x, y
		}
	}
	e := ledger.Entry{Time: now, Event: event, Checkpoint: d.ID, Job: owner.Job, DB: db, Table: table, Sub: t.Sub,
		Label: t.Label, TxnID: t.TxnID, State: string(state), DecidedAt: d.DecidedAt}
	if n := len(d.Txns); n > 1 {
		e.Txns = n
	}
	if len(d.Start) > 0 || len(d.End) > 0 {
		e.Ranges = ledger.Ranges(d.Start, d.End)
	}
	if t.Committed {
		e.CommittedAt = t.CommittedAt
	}
	if c := t.Counts; c != nil {
		e.RowsTotal, e.RowsLoaded, e.RowsFiltered, e.RowsUnselected = c.RowsTotal, c.RowsLoaded, c.RowsFiltered, c.RowsUnselected
		e.Bytes, e.Attempts = c.Bytes, c.Attempts
	}
	return e
}

// resolutionEntry is the "resolved" entry of operator resolution r of st.
func resolutionEntry(owner checkpoint.Owner, st *checkpoint.State, r checkpoint.Resolution, now time.Time) ledger.Entry {
	db, table := owner.DB, owner.Table
	if r.Table != "" {
		if x, y, err := checkpoint.SplitTable(r.Table); err == nil {
			db, table = x, y
		}
	}
	e := ledger.Entry{Time: r.At, Event: ledger.EventResolved, Checkpoint: r.CheckpointID, Job: owner.Job, DB: db, Table: table,
		Sub: r.Sub, Label: r.Label, Note: "operator assumed " + r.Assumed + " (by " + r.By + ")"}
	if e.Time.IsZero() {
		e.Time = now
	}
	e.State = string(doris.TxnVisible)
	if r.Assumed == checkpoint.ResolvedAborted {
		e.State = string(doris.TxnAborted)
	}
	if d := st.Decided; d != nil && d.ID == r.CheckpointID {
		dd := d.Clone()
		dd.Sync(owner)
		e.DecidedAt = dd.DecidedAt
		e.Ranges = ledger.Ranges(dd.Start, dd.End)
		tbl := r.Table
		if tbl == "" {
			tbl = owner.TableName()
		}
		if t := dd.SubTxn(tbl, r.Sub); t != nil {
			e.TxnID = t.TxnID
		}
	}
	return e
}

func containsResolution(rs []checkpoint.Resolution, r checkpoint.Resolution) bool {
	for _, x := range rs {
		if x.CheckpointID == r.CheckpointID && x.Label == r.Label && x.Sub == r.Sub && x.At.Equal(r.At) {
			return true
		}
	}
	return false
}
