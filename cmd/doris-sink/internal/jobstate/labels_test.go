package jobstate

import (
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// A decision of several tables lists one label per txn, with its table;
// an announcement names its table.
func TestLabelsPerTable(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	st := &checkpoint.State{
		Owner:  checkpoint.Owner{Job: "j", DB: "demo", Table: "t", Writer: "0"},
		NextID: 9,
		Decided: &checkpoint.Decision{ID: 7, Label: "j:demo-t:0:7", DecidedAt: at, Txns: []checkpoint.Txn{
			{Table: "demo.a", Label: "j:demo-a:0:7", TxnID: 2007, Committed: true, CommittedAt: at},
			{Table: "demo.b", Label: "j:demo-b:0:7", TxnID: 3007},
		}},
		Announced: []checkpoint.Announcement{{ID: 8, Table: "demo.a", Label: "j:demo-a:0:8", At: at}},
	}
	got := (&View{State: st}).Labels()
	want := []Label{
		{Label: "j:demo-a:0:8", Scope: "0", Checkpoint: 8, Table: "demo.a", Role: RoleAnnounced, At: at},
		{Label: "j:demo-a:0:7", Scope: "0", Checkpoint: 7, Table: "demo.a", Role: RoleDecided, TxnID: 2007, Committed: true, At: at},
		{Label: "j:demo-b:0:7", Scope: "0", Checkpoint: 7, Table: "demo.b", Role: RoleDecided, TxnID: 3007, At: at},
	}
	if len(got) != len(want) {
		t.Fatalf("Labels = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("label %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
