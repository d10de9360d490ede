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
	if t.Keys != schema.DuplicateKeys {
		tc.Note = fmt.Sprintf("not compared: a %s KEY table merges rows by key, so its count legitimately differs from the rows loaded", t.Keys)
		return
	}
	// Only the txns of in.Table count (a checkpoint of several tables has
	// one txn per table; entries that name no table are in.Table's).
	var mine []*record
	var states []doris.TxnStatus
	for _, r := range recs {
		for _, tx := range r.txnRecords() {
			if tx.table == "" || (tx.table == in.Table && (tx.db == "" || tx.db == in.DB)) {
				mine = append(mine, tx)
				states = append(states, txnStates[tx])
			}
		}
	}
	want, why := expectedRows(mine, states)
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
	tc.Status = TableCountMismatch
	tc.Note = fmt.Sprintf("%s.%s has %d rows, the committed checkpoints loaded %d (%+d)", in.DB, in.Table, n, want, n-want)
	rep.add(Finding{Severity: SeverityGap, Kind: KindTableCount, Message: tc.Note +
		": rows lost, or loaded outside this job's ledger (a checkpoint committed while verify ran explains it too: run again)." +
		" If other writers load this table, run with --table-count=false"})
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
