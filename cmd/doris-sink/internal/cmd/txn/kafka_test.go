package txn

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

// Issue 12: with job.coordinator kafka the `txn abort` guard read
// job.data_dir, found no store and only warned. It reads the state topic
// now: aborting the decided txn is refused as with the file store.
func TestTxnGuardReadsKafkaState(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafka(t)
	j.CrashAt(loader.FailAfterDecide, 1, 20, 5)
	d := j.State().Decided
	wantOwnedRefusal(t, decide(j, Abort, strconv.FormatInt(d.TxnID, 10), "--yes"), "txn commit")
}

// Group mode: a label of writer slot 1 is checked against slot 1's state
// (it was compared with slot 0's owner and refused as "not of the store").
// Aborting slot 1's announced, PRECOMMITTED label goes through (what
// `checkpoint reslot` asks for); aborting its decided txn is refused.
func TestTxnGuardChecksTheLabelsSlot(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, 2)
	st := j.Decide(1, 2, []map[int32]int64{{1: 3}}, true)
	l := j.Announce(1, 2)
	ctx := context.Background()
	lr, err := j.Client.StreamLoad(ctx, doris.LoadRequest{DB: jobtest.DB, Table: jobtest.Table, Label: l, Format: "json",
		TwoPhaseCommit: true}, strings.NewReader(string(jobtest.Row(1))))
	if err != nil {
		t.Fatal(err)
	}
	if r := decide(j, Abort, "--label", l, "--yes"); r.err != nil {
		t.Fatalf("txn abort of slot 1's announced label: %v (%s)", r.err, r.errOut)
	}
	if s, err := j.Client.LoadState(ctx, jobtest.DB, l); err != nil || s != doris.TxnAborted {
		t.Errorf("label %s (txn %d) is %s %v after the abort", l, lr.TxnID, s, err)
	}
	var oe *OwnedLabelError
	if r := decide(j, Abort, "--label", st.Decided.Label, "--yes"); !errors.As(r.err, &oe) || !strings.Contains(r.err.Error(), "it is decided") {
		t.Errorf("txn abort of slot 1's decided label: %v, want the decided-label refusal", r.err)
	}
}
