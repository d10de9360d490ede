package verify

import (
	"encoding/json"
	"testing"

	"github.com/doris-sink/doris-sink/loader/ledger"
)

// A checkpoint of two tables (3 + 4 rows over 7 offsets) is one ledger
// entry per txn: fold sums its txns' rows (it once kept the last entry's
// 4 rows, a false gap of 3 records), and takes the dead letters from the
// one txn whose entries carry them (the decision's first txn), also after
// a heal of the other txn that kept the first committed (the loader's
// heal writes no new entry for a kept txn and 0 dead letters on the
// healed one's).
func TestFoldSumsTxnsOfOneCheckpoint(t *testing.T) {
	t.Parallel()
	rg := json.RawMessage(`{"start":{"0":0},"end":{"0":9}}`)
	a := func(ev string) ledger.Entry {
		return ledger.Entry{Event: ev, Checkpoint: 1, DB: "db", Table: "a", Txns: 2, Label: "j:db-a:0:1", TxnID: 10,
			Ranges: rg, RowsTotal: 3, RowsLoaded: 3, DeadLettered: 2}
	}
	b := func(ev string, txn int64) ledger.Entry {
		return ledger.Entry{Event: ev, Checkpoint: 1, DB: "db", Table: "b", Txns: 2, Label: "j:db-b:0:1", TxnID: txn,
			Ranges: rg, RowsTotal: 4, RowsLoaded: 4}
	}
	for name, es := range map[string][]ledger.Entry{
		"committed": {a(ledger.EventDecided), b(ledger.EventDecided, 11), a(ledger.EventCommitted),
			b(ledger.EventCommitted, 11)},
		"b healed": {a(ledger.EventDecided), b(ledger.EventDecided, 11), a(ledger.EventCommitted),
			{Event: ledger.EventAborted, Checkpoint: 1, DB: "db", Table: "b", Label: "j:db-b:0:1", TxnID: 11},
			b(ledger.EventHealed, 12), b(ledger.EventCommitted, 12)},
	} {
		rs := fold(es)
		if len(rs) != 1 {
			t.Fatalf("%s: %d records, want 1", name, len(rs))
		}
		r := rs[0]
		if r.rows.total != 7 || r.rows.loaded != 7 || r.deadLettered != 2 || !r.loaded || len(r.txns) != 2 {
			t.Errorf("%s: checkpoint 1 of two txns (3 + 4 rows, 2 dead letters) folds to %+v, want 7 rows, 2 dead "+
				"letters, loaded", name, r)
		}
	}
}
