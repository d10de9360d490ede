package verify

import (
	"context"
	"fmt"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// Table-count outcomes (TableCount.Status).
const (
	TableCountOK       = "ok"
	TableCountMismatch = "mismatch"
	TableCountSkipped  = "skipped"
)

// TableCount is the comparison of the table's row count with the rows the
// ledger says were loaded (verify --table-count).
type TableCount struct {
	// Model is the table's key model (DUPLICATE, UNIQUE, AGGREGATE), "" when
	// unknown.
	Model string `json:"model"`
	// Rows is SELECT COUNT(*) of the table; -1 when not counted.
	Rows int64 `json:"rows"`
	// LedgerRows sums the loaded rows of the checkpoints committed in Doris
	// or in the ledger; -1 when not computed.
	LedgerRows int64 `json:"ledger_rows"`
	// Status is ok, mismatch or skipped.
	Status string `json:"status"`
	// Note says why the count was skipped or what a mismatch means.
	Note string `json:"note,omitempty"`
}

// checkTableCount compares SELECT COUNT(*) of a DUPLICATE KEY table with
// the loaded rows of the committed checkpoints; a difference is a gap. It
// assumes the job is the table's only writer (the caller turns the check
// off otherwise). UNIQUE and AGGREGATE tables are skipped: merging by key
// legitimately makes their counts smaller (docs/doris-facts.md §7). states are the
// Doris states checkDoris found, by record.
func checkTableCount(ctx context.Context, in Input, recs []*record, txnStates map[*record]doris.TxnStatus, rep *Report) {
	if in.Doris == nil {
		return
	}
	tc := &TableCount{Rows: -1, LedgerRows: -1, Status: TableCountSkipped}
	rep.TableCount = tc
	if !in.TableCount {
		tc.Note = "not compared (--table-count=false)"
		return
	}
	t, err := in.Doris.ShowCreateTable(ctx, in.DB, in.Table)
	if err != nil {
		tc.Note = "table model unknown: " + err.Error()
		rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: "table count not compared: " + err.Error()})
		return
	}
	tc.Model = string(t.Keys)
	if in.Bounded {
		tc.Note = "not compared: the evidence was read from --since on, not from the job's start"
		return
	}
	if in.Incomplete != "" {
		tc.Note = "not compared: " + in.Incomplete
		rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: "table count not compared: " + in.Incomplete})
		return
	}
	mine := tableTxns(in, recs)
	if t.Keys != schema.DuplicateKeys {
		tc.Note = fmt.Sprintf("not compared: a %s KEY table merges rows by key, so its count legitimately differs from the rows loaded", t.Keys)
		checkMergedUpperBound(ctx, in, mine, tc, rep)
		return
	}
	states := make([]doris.TxnStatus, len(mine))
	for i, tx := range mine {
		states[i] = txnStates[tx]
	}
	base := in.Baseline[in.DB+"."+in.Table]
	want, why := expectedRows(mine, states)
	want += base
	if why != "" {
		tc.Note = "not compared: " + why
		rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: "table count not compared: " + why})
		return
	}
	tc.LedgerRows = want
	n, err := in.Doris.TableRowCount(ctx, in.DB, in.Table)
	if err != nil {
		tc.Note = err.Error()
		rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: "table count: " + err.Error()})
		return
	}
	tc.Rows = n
	if n == want {
		tc.Status = TableCountOK
		return
	}
	high, settled := int64(-1), false
	if n > want && in.Reread != nil {
		// Settle rule for a running job: the evidence read before the count
		// (E1) bounds it from below, a second read after it (E2) from
		// above: a checkpoint decided after E1 may have committed before
		// the count.
		recs2, err := in.Reread(ctx)
		if err != nil {
			rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: "table count: second evidence read: " + err.Error()})
		} else if h, ok := decidedRows(tableTxns(in, recs2)); ok {
			high = h + base
			settled = n <= high
		}
	}
	if settled {
		tc.Status = TableCountOK
		tc.Note = fmt.Sprintf("settled: %d rows, between the %d the committed checkpoints loaded when verify began and the %d of every "+
			"checkpoint decided when it counted (a checkpoint committed while verify ran)", n, want, high)
		return
	}
	tc.Status = TableCountMismatch
	if n > want {
		bound := want
		if high > want {
			bound = high
		}
		tc.Note = fmt.Sprintf("%s.%s has %d rows, the evidence accounts for %d: %d extra rows", in.DB, in.Table, n, bound, n-bound)
		rep.add(Finding{Severity: SeverityGap, Kind: KindTableCount, Message: tc.Note +
			": rows loaded outside this job's evidence (another writer, or a row written by hand)." +
			" If other writers load this table, run with --table-count=false"})
		return
	}
	tc.Note = fmt.Sprintf("%s.%s has %d rows, the committed checkpoints loaded %d: %d rows lost", in.DB, in.Table, n, want, want-n)
	rep.add(Finding{Severity: SeverityGap, Kind: KindTableCount, Message: tc.Note +
		": rows deleted from the table after they were loaded, or a load the evidence counts that Doris does not hold"})
}

// tableTxns returns the txn records of in.Table among recs (a checkpoint
// of several tables has one txn per table; entries that name no table
// are in.Table's).
func tableTxns(in Input, recs []*record) []*record {
	var mine []*record
	for _, r := range recs {
		for _, tx := range r.txnRecords() {
			if tx.table == "" || (tx.table == in.Table && (tx.db == "" || tx.db == in.DB)) {
				mine = append(mine, tx)
			}
		}
	}
	return mine
}

// decidedRows sums the loaded rows of every decided txn of recs, committed
// or not: the most rows Doris can hold for them. ok is false when a txn's
// counts are unknown.
func decidedRows(recs []*record) (int64, bool) {
	var n int64
	for _, r := range recs {
		if !r.counts && r.txnID == 0 {
			continue
		}
		if !r.counts {
			return 0, false
		}
		n += r.rows.loaded
	}
	return n, true
}

// expectedRows sums the loaded rows of the checkpoints whose rows are
// visible: committed in the ledger (or resolved visible) or VISIBLE in
// Doris. why is set when the sum cannot be trusted.
func expectedRows(recs []*record, states []doris.TxnStatus) (n int64, why string) {
	for i, r := range recs {
		var st doris.TxnStatus
		if i < len(states) {
			st = states[i]
		}
		if st == doris.TxnCommitted {
			return 0, fmt.Sprintf("checkpoint %d is COMMITTED but not yet VISIBLE (publish pending): run again", r.id)
		}
		if !r.loaded && st != doris.TxnVisible {
			continue
		}
		if !r.counts && r.txnID == 0 {
			continue // an empty checkpoint: no transaction, no rows
		}
		if !r.counts {
			return 0, fmt.Sprintf("checkpoint %d is loaded but the ledger has no row counts for it", r.id)
		}
		n += r.rows.loaded
	}
	return n, ""
}

// checkMergedUpperBound checks the one bound a UNIQUE or AGGREGATE KEY
// table's count keeps: merging by key and delete rows only lower it, so
// it never exceeds the rows of every decided checkpoint (a second
// evidence read's, for a running job). More is extra rows: a gap.
func checkMergedUpperBound(ctx context.Context, in Input, mine []*record, tc *TableCount, rep *Report) {
	high, ok := decidedRows(mine)
	if !ok {
		return
	}
	base := in.Baseline[in.DB+"."+in.Table]
	high += base
	n, err := in.Doris.TableRowCount(ctx, in.DB, in.Table)
	if err != nil {
		return // the count is not compared for these tables anyway
	}
	if n <= high {
		return
	}
	if in.Reread != nil {
		if recs2, err := in.Reread(ctx); err == nil {
			if h, ok := decidedRows(tableTxns(in, recs2)); ok && h+base > high {
				high = h + base
			}
		}
	}
	if n <= high {
		return
	}
	tc.Rows, tc.Status = n, TableCountMismatch
	tc.Note = fmt.Sprintf("%s.%s (%s KEY) has %d rows, more than the %d the evidence's checkpoints loaded at most: %d extra rows",
		in.DB, in.Table, tc.Model, n, high, n-high)
	rep.add(Finding{Severity: SeverityGap, Kind: KindTableCount, Message: tc.Note +
		": rows loaded outside this job's evidence (another writer, or a row written by hand)." +
		" If other writers load this table, run with --table-count=false"})
}
