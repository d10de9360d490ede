package jobstate

import (
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// An operator record names the txn it resolved by table, sub-load, label
// and txn id: it is pending only while that exact txn of the decided
// checkpoint is uncommitted and not yet resolved that way.
func TestOperatorPendingNamesTableAndSubLoad(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st := &checkpoint.State{Owner: checkpoint.Owner{Job: "j", DB: "db", Table: "t", Writer: "0"},
		Decided: &checkpoint.Decision{ID: 4, DecidedAt: at, Txns: []checkpoint.Txn{
			{Table: "db.t", Label: "j:db.t:0:4", TxnID: 40, Subs: 2, Committed: true},
			{Table: "db.t", Sub: 1, Label: "j:db.t:0:4:1", TxnID: 41, Subs: 2},
			{Table: "db.u", Label: "j:db.u:0:4", TxnID: 50},
		}}}
	op := func(table string, sub int, label string, txn int64) *coordlog.Operator {
		return &coordlog.Operator{Checkpoint: 4, Table: table, Sub: sub, Label: label, TxnID: txn,
			Assumed: checkpoint.ResolvedAborted, At: at.Add(time.Minute)}
	}
	for _, tc := range []struct {
		what string
		op   *coordlog.Operator
		want bool
	}{
		{"the uncommitted sub-load 1", op("db.t", 1, "j:db.t:0:4:1", 41), true},
		{"another table's txn", op("db.u", 0, "j:db.u:0:4", 50), true},
		{"sub-load 0, committed", op("db.t", 0, "j:db.t:0:4", 40), false},
		{"sub-load 1's label under sub 0", op("db.t", 0, "j:db.t:0:4:1", 41), false},
		{"another txn id", op("db.t", 1, "j:db.t:0:4:1", 99), false},
		{"another checkpoint", &coordlog.Operator{Checkpoint: 3, Table: "db.u", Label: "j:db.u:0:4", TxnID: 50}, false},
	} {
		if got := OperatorPending(st, tc.op); got != tc.want {
			t.Errorf("%s: pending = %v, want %v", tc.what, got, tc.want)
		}
	}
	st.Resolved = []checkpoint.Resolution{{CheckpointID: 4, Table: "db.t", Sub: 1, Label: "j:db.t:0:4:1",
		Assumed: checkpoint.ResolvedAborted, At: at.Add(2 * time.Minute)}}
	if OperatorPending(st, op("db.t", 1, "j:db.t:0:4:1", 41)) {
		t.Error("a record already applied is still pending")
	}
}
