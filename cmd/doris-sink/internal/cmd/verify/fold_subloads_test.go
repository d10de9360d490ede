package verify

import (
	"encoding/json"
	"testing"

	"github.com/doris-sink/doris-sink/loader/ledger"
)

// A checkpoint loading one table through three sub-loads (labels
// j:db-a:0:1, j:db-a:0:1:1, j:db-a:0:1:3; 2 + 3 + 4 rows) is one txn per
// sub-load in the ledger: fold keeps each sub-load's latest entry (by
// label) and sums them, also after a heal of one sub-load only; the
// checkpoint is loaded once every sub-load is.
func TestFoldSumsSubLoadsOfOneTable(t *testing.T) {
	t.Parallel()
	rg := json.RawMessage(`{"start":{"0":0},"end":{"0":9}}`)
	sub := func(ev, lbl string, s int, txn, rows int64) ledger.Entry {
		return ledger.Entry{Event: ev, Checkpoint: 1, DB: "db", Table: "a", Sub: s, Txns: 3, Label: lbl, TxnID: txn,
			Ranges: rg, RowsTotal: rows, RowsLoaded: rows}
	}
	decided := []ledger.Entry{
		sub(ledger.EventDecided, "j:db-a:0:1", 0, 10, 2),
		sub(ledger.EventDecided, "j:db-a:0:1:1", 1, 11, 3),
		sub(ledger.EventDecided, "j:db-a:0:1:3", 3, 12, 4),
	}
	for name, c := range map[string]struct {
		es     []ledger.Entry
		loaded bool
	}{
		"committed": {append(decided, sub(ledger.EventCommitted, "j:db-a:0:1", 0, 10, 2),
			sub(ledger.EventCommitted, "j:db-a:0:1:1", 1, 11, 3), sub(ledger.EventCommitted, "j:db-a:0:1:3", 3, 12, 4)), true},
		"one not committed": {append(decided, sub(ledger.EventCommitted, "j:db-a:0:1", 0, 10, 2),
			sub(ledger.EventCommitted, "j:db-a:0:1:3", 3, 12, 4)), false},
		"sub 1 healed": {append(decided, sub(ledger.EventCommitted, "j:db-a:0:1", 0, 10, 2),
			sub(ledger.EventCommitted, "j:db-a:0:1:3", 3, 12, 4),
			ledger.Entry{Event: ledger.EventAborted, Checkpoint: 1, DB: "db", Table: "a", Sub: 1, Label: "j:db-a:0:1:1", TxnID: 11},
			sub(ledger.EventHealed, "j:db-a:0:1:1", 1, 13, 3), sub(ledger.EventCommitted, "j:db-a:0:1:1", 1, 13, 3)), true},
	} {
		rs := fold(c.es)
		if len(rs) != 1 {
			t.Fatalf("%s: %d records, want 1", name, len(rs))
		}
		r := rs[0]
		if r.rows.total != 9 || r.rows.loaded != 9 || r.loaded != c.loaded || len(r.txns) != 3 {
			t.Errorf("%s: checkpoint 1 of three sub-loads (2 + 3 + 4 rows) folds to %+v (%d txns), want 9 rows, loaded %t",
				name, r, len(r.txns), c.loaded)
		}
	}
}
