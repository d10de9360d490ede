package status

import (
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// A decision of a routed job holds one txn per table: status lists each
// (label, txn, committed, rows) in JSON and, for several, as a table.
func TestStatusListsTheTxnOfEveryTable(t *testing.T) {
	t.Parallel()
	d := &checkpoint.Decision{ID: 3, Txns: []checkpoint.Txn{
		{Table: "shop.items", Label: "j:shop.items:0:3", TxnID: 11, Committed: true,
			Counts: &checkpoint.LoadCounts{RowsLoaded: 4}},
		{Table: "shop.orders", Label: "j:shop.orders:0:3", TxnID: 12},
	}}
	ts := tableStatus(d)
	if len(ts) != 2 || ts[0].Table != "shop.items" || ts[0].TxnID != 11 || !ts[0].Committed ||
		ts[0].RowsLoaded == nil || *ts[0].RowsLoaded != 4 || ts[1].RowsLoaded != nil || ts[1].Committed {
		t.Fatalf("tableStatus = %+v", ts)
	}
	io, out, _ := cmdutil.TestStreams("", false)
	r := &Result{Job: "j", Topic: "t", Table: "shop.orders", State: StateNotRunning, Tables: ts, Partitions: []Partition{}}
	if err := printResult(io, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"j:shop.items:0:3", "j:shop.orders:0:3", "unknown"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
	if got := tableStatus(&checkpoint.Decision{ID: 1, Empty: true}); got != nil {
		t.Errorf("an empty decision lists %+v", got)
	}
}
