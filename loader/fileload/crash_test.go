package fileload

import (
	"errors"
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// crashCase crashes at the (skip+1)-th hit of a failpoint.
type crashCase struct {
	name  string
	skip  int
	split bool
}

func crashCases() []crashCase {
	var cs []crashCase
	for _, n := range loader.AllFailpoints {
		cs = append(cs, crashCase{name: n})
	}
	// Per-worker cut points crash at a later worker too (some precommitted,
	// some committed, others not), and a split load at its second round
	// (the first committed, the second in flight).
	return append(cs,
		crashCase{name: loader.FailMidStream, skip: 2},
		crashCase{name: loader.FailAfterPrecommit, skip: 2},
		crashCase{name: loader.FailAfterCommitBeforeLedger, skip: 1},
		crashCase{name: loader.FailAfterCommitResponseLost, skip: 2},
		crashCase{name: loader.FailAfterAnnounce, skip: 1, split: true},
		crashCase{name: loader.FailAfterPrecommit, skip: 4, split: true},
		crashCase{name: loader.FailAfterDecide, skip: 1, split: true},
		crashCase{name: loader.FailAfterCommitBeforeLedger, skip: 4, split: true},
	)
}

// A crash (kill -9) at every cut point of the protocol, then the same load
// run again on the same store and emulator: every row is in the table
// exactly once, and no txn of the load is left PREPARE or PRECOMMITTED.
func TestResumeAfterCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	for _, cc := range crashCases() {
		t.Run(fmt.Sprintf("%s/skip%d/split%t", cc.name, cc.skip, cc.split), func(t *testing.T) {
			t.Parallel()
			s, c := newDoris(t, ddl, doristest.FEConfig(doristest.ConfPrecommitTimeout, 1000))
			dir, store := t.TempDir(), t.TempDir()
			files := []string{
				csvFile(t, dir, "a.csv", 0, 120, true),
				csvFile(t, dir, "b.csv.gz", 120, 160, false),
				csvFile(t, dir, "c.csv", 160, 300, true),
			}
			o := opts(c, store, files...)
			if cc.split {
				// Rounds of about 3 workers × 1 B/s × 1000 s / 2 = 1500 bytes.
				o.Split, o.AssumedRate = true, 1
			}
			fp := loader.NewFailpoints()
			h, err := fp.Arm(cc.name, loader.Crash().Skip(cc.skip))
			if err != nil {
				t.Fatal(err)
			}
			o.Failpoints = fp
			_, err = Run(ctx(t), o)
			if !errors.Is(err, loader.ErrCrashed) || h.Hits() != 1 {
				t.Fatalf("Run = %v with %d crash hits, want a crash (loader.ErrCrashed) at %s", err, h.Hits(), cc.name)
			}
			o.Failpoints = nil
			res, err := Run(ctx(t), o)
			if err != nil {
				t.Fatalf("rerun after the crash at %s: %v", cc.name, err)
			}
			wantExactlyOnce(t, s, 300)
			if res.TotalRows != 300 {
				t.Fatalf("rerun %+v: want 300 rows in total", res)
			}
			wantSettled(t, s)
		})
	}
}

// wantSettled fails when a txn of demo is PREPARE, PRECOMMITTED or
// COMMITTED (not yet visible).
func wantSettled(t *testing.T, s *doristest.Server) {
	t.Helper()
	txns, err := s.Txns("demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range txns {
		if x.Status != doris.TxnVisible && x.Status != doris.TxnAborted {
			t.Errorf("txn %d (%s) is %s after the load finished", x.ID, x.Label, x.Status)
		}
	}
}
