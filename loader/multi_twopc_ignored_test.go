package loader_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// dropTwoPCFor drops the two_phase_commit header of the Stream Loads of one
// table only (a proxy route in front of some BEs): Doris commits that
// table's load instead of precommitting it.
type dropTwoPCFor struct {
	loader.Doris
	table string
}

func (d *dropTwoPCFor) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	if req.Table != d.table || !req.TwoPhaseCommit {
		return d.Doris.StreamLoad(ctx, req, body)
	}
	req.TwoPhaseCommit = false
	res, err := d.Doris.StreamLoad(ctx, req, body)
	if err != nil {
		return res, err
	}
	return nil, &doris.LoadError{Op: "stream load", DB: req.DB, Table: req.Table, Label: req.Label, TxnID: res.TxnID,
		Status: res.Status, Message: res.Message, Result: res}
}

// In a checkpoint of three tables, Doris commits m1's load without
// precommit (two_phase_commit ignored) while m0's precommit fails: m1's
// rows are visible for a checkpoint that cannot be decided, so the loader
// stops for good with an error wrapping doris.ErrTwoPhaseCommitIgnored
// (not ErrNeedRecover), and Recover in the same process returns it too,
// instead of asking for a Recover that met the VISIBLE label as a fencing
// violation (review of branch multi, finding 4). The other tables' loads
// are aborted: m1 holds its rows once, the others none, no txn lingers.
func TestMultiTableTwoPCIgnoredWithFailedPrecommitStops(t *testing.T) {
	t.Parallel()
	const n, every = 6, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.doris = &dropTwoPCFor{Doris: e.client, table: "m1"}
	e.fault(doristest.Fault{Op: doristest.FaultPrecommit, DB: testDB, Table: "m0",
		Err: &doristest.FaultErr{Message: "injected precommit failure"}})
	l := e.open()
	recoverTo(t, ctx, l, 0)
	err := driveMulti(ctx, l, 0, n, every)
	if !errors.Is(err, doris.ErrTwoPhaseCommitIgnored) || errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("checkpoint: %v; want ErrTwoPhaseCommitIgnored, not ErrNeedRecover", err)
	}
	var le *doris.LoadError
	if !errors.As(err, &le) || le.Table != "m1" || le.TxnID == 0 {
		t.Errorf("the error does not name m1's committed load (label, txn): %v", err)
	}
	if werr := l.WriteTo(ctx, "m0", row(0)); !errors.Is(werr, doris.ErrTwoPhaseCommitIgnored) {
		t.Errorf("write after the stop: %v, want the same error", werr)
	}
	_, rerr := l.Recover(ctx)
	var fe *loader.FencingError
	if !errors.Is(rerr, doris.ErrTwoPhaseCommitIgnored) || errors.As(rerr, &fe) {
		t.Errorf("Recover after the stop = %v, want the same error (not a fencing violation)", rerr)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	for table, want := range map[string][]int64{"m0": nil, "m1": {2, 3}, "m2": nil} {
		rows, err := e.srv.Rows(testDB, table)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range rows {
			got = append(got, r[0].(int64))
		}
		if len(got) != len(want) || (len(want) > 0 && (got[0] != want[0] || got[1] != want[1])) {
			t.Errorf("table %s holds ids %v, want %v (committed by Doris: once; aborted: none)", table, got, want)
		}
	}
	e.checkNoRunningTxn()
	// A restart cannot tell this from another writer: m1's label is
	// announced and VISIBLE.
	e.doris = nil
	l = e.open()
	defer l.Close(ctx)
	if _, err := l.Recover(ctx); !errors.As(err, &fe) || fe.Label != le.Label {
		t.Errorf("Recover after a restart = %v, want a fencing violation on %s", err, le.Label)
	}
}
