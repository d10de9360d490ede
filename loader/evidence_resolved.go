package loader

import (
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// repairResolved appends the "resolved" ledger entry of each operator
// resolution of st's decided checkpoint (State.Resolved) that the ledger
// lacks. ResolveAssume saves the store before it appends the entry, so a
// crash between the two (FailResolveBeforeLedger) leaves the resolution
// applied, once (the operator record is not applied again), and no ledger
// entry naming the operator. Recover calls it before repairEvidence, which
// then counts the repaired entry as the commit of a txn assumed visible.
// Only resolutions made since the checkpoint was decided are repaired (an
// older one lies beyond the part of the ledger read back): it is
// idempotent.
func (l *Loader) repairResolved(st *checkpoint.State) {
	d := st.Decided
	if l.ledger == nil || d == nil {
		return
	}
	var entries []ledger.Entry
	read := false
	for _, r := range st.Resolved {
		if r.CheckpointID != d.ID || r.At.Before(d.DecidedAt) {
			continue
		}
		if !read {
			entries, read = l.ledgerTail(d), true
		}
		if hasResolvedEntry(entries, r) {
			continue
		}
		dd := d.Clone()
		dd.Sync(st.Owner)
		table := r.Table
		if table == "" {
			table = st.Owner.DB + "." + st.Owner.Table
		}
		var txnID int64
		if t := dd.SubTxn(table, r.Sub); t != nil {
			txnID = t.TxnID
		}
		l.log.Warn("recover: the ledger lacked the resolved entry of an operator resolution; appending it",
			"id", d.ID, "table", table, "label", r.Label, "assumed", r.Assumed, "by", r.By)
		e := resolvedEntry(st.Owner, &dd, r, txnID, resolvedNote(r)+"; recovery: the store recorded the resolution, the "+
			"ledger had no resolved entry (crash between the two writes)")
		if err := l.ledger.Append(e); err != nil {
			l.log.Warn("ledger append failed", "event", ledger.EventResolved, "label", r.Label, "err", err)
		}
	}
}

// hasResolvedEntry reports whether entries hold the "resolved" entry of r
// (same checkpoint, label and time).
func hasResolvedEntry(entries []ledger.Entry, r checkpoint.Resolution) bool {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Event == ledger.EventResolved && e.Checkpoint == r.CheckpointID && e.Label == r.Label && e.Time.Equal(r.At) {
			return true
		}
	}
	return false
}

// resolvedNote is the start of a "resolved" entry's note.
func resolvedNote(r checkpoint.Resolution) string {
	return "operator assumed " + r.Assumed + " (by " + r.By + ")"
}

// resolvedEntry is the "resolved" ledger entry of resolution r of the
// decided checkpoint d, whose resolved txn is txnID.
func resolvedEntry(owner checkpoint.Owner, d *checkpoint.Decision, r checkpoint.Resolution, txnID int64, note string) ledger.Entry {
	db, table, err := checkpoint.SplitTable(r.Table)
	if err != nil || r.Table == "" {
		db, table = owner.DB, owner.Table
	}
	return ledger.Entry{Time: r.At, Event: ledger.EventResolved, Checkpoint: d.ID, Job: owner.Job, DB: db, Table: table, Sub: r.Sub,
		Label: r.Label, TxnID: txnID, DecidedAt: d.DecidedAt, Ranges: ledger.Ranges(d.Start, d.End), Note: note}
}
