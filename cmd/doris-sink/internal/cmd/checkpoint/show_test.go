package checkpoint

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// The human view of `checkpoint show` prints the decision's load counters
// (Decision.Counts) as -o json does, and says when they are unknown.
func TestPrintShowCounts(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	counted := checkpoint.Decision{ID: 7, Label: "j:demo-t:0:7", TxnID: 1007, DecidedAt: at, End: json.RawMessage(`{"0":70}`),
		Counts: &checkpoint.LoadCounts{RowsTotal: 12, RowsLoaded: 10, RowsFiltered: 1, RowsUnselected: 1, Bytes: 345, Attempts: 2, DeadLettered: 3}}
	old := checkpoint.Decision{ID: 6, Label: "j:demo-t:0:6", TxnID: 1006, DecidedAt: at, Committed: true}
	for _, tc := range []struct {
		name string
		tty  bool
		want []string
	}{
		{"tty", true, []string{
			"10 of 12 rows loaded (filtered 1, unselected 1), 345 bytes, 2 attempt(s), 3 record(s) dead-lettered",
			"ROWS LOADED", "unknown",
		}},
		{"piped", false, []string{"10 of 12 rows loaded", "\t10\t", "\tunknown\t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, out, _ := cmdutil.NewTestFactory(tc.tty)
			r := &ShowResult{Decided: &counted, History: []checkpoint.Decision{old, counted}}
			if err := printShow(f.IO, r); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
	f, out, _ := cmdutil.NewTestFactory(false)
	if err := printShow(f.IO, &ShowResult{Decided: &old}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "counts unknown") {
		t.Errorf("a decision without counts does not say they are unknown:\n%s", out.String())
	}
}

// `checkpoint show` lists every txn of the decision, one per table.
func TestPrintShowTxns(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	d := checkpoint.Decision{ID: 7, Label: "j:demo-t:0:7", TxnID: 1007, DecidedAt: at, Txns: []checkpoint.Txn{
		{Table: "demo.a", Label: "j:demo-a:0:7", TxnID: 2007, Committed: true, CommittedAt: at,
			Counts: &checkpoint.LoadCounts{RowsLoaded: 4}},
		{Table: "demo.t", Label: "j:demo-t:0:7", TxnID: 1007, Healed: 1},
	}}
	f, out, _ := cmdutil.NewTestFactory(false)
	if err := printShow(f.IO, &ShowResult{Decided: &d}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"demo.a\tj:demo-a:0:7\t2007\ttrue\t0\t4", "demo.t\tj:demo-t:0:7\t1007\tfalse\t1\tunknown"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}
