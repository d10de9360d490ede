package fileload

import (
	"errors"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader"
)

// Doris aborting decided txns while the load is down (their precommit
// timed out: doristest TimeoutPrecommitted, "timeout by txn manager") is
// healed on the rerun: the aborted workers' pieces are loaded again under
// new labels (scope h1) and committed, the committed ones left alone; a
// crash in the middle of a heal is healed again by the next run. Every row
// ends up exactly once.
func TestRerunHealsDecidedTxnsDorisAborted(t *testing.T) {
	t.Parallel()
	for _, cc := range []struct {
		crashAt    string
		skip       int
		wantHealed int
	}{
		{loader.FailAfterDecide, 0, 3},             // nothing committed
		{loader.FailAfterCommitBeforeLedger, 0, 2}, // worker 0 committed
	} {
		t.Run(cc.crashAt, func(t *testing.T) {
			t.Parallel()
			s, c := newDoris(t, ddl)
			dir, store := t.TempDir(), t.TempDir()
			o := opts(c, store, csvFile(t, dir, "a.csv", 0, 150, true), csvFile(t, dir, "b.csv.gz", 150, 200, true))
			fp := loader.NewFailpoints()
			if _, err := fp.Arm(cc.crashAt, loader.Crash().Skip(cc.skip)); err != nil {
				t.Fatal(err)
			}
			o.Failpoints = fp
			if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("Run = %v, want a crash", err)
			}
			if n := s.TimeoutPrecommitted(); n != cc.wantHealed {
				t.Fatalf("%d PRECOMMITTED txns timed out, want %d", n, cc.wantHealed)
			}
			// The rerun crashes inside its first heal, after it precommitted.
			fp = loader.NewFailpoints()
			if _, err := fp.Arm(loader.FailAfterPrecommit, loader.Crash()); err != nil {
				t.Fatal(err)
			}
			o.Failpoints = fp
			if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("rerun = %v, want a crash in the heal", err)
			}
			o.Failpoints = nil
			res, err := Run(ctx(t), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Healed != cc.wantHealed {
				t.Fatalf("healed %d txns, want %d (result %+v)", res.Healed, cc.wantHealed, res)
			}
			healedLabels := 0
			for _, l := range res.Labels {
				p, err := label.Parse(l)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(p.Scope, "h") {
					healedLabels++
				}
			}
			if healedLabels != cc.wantHealed {
				t.Fatalf("labels %v: want %d heal labels", res.Labels, cc.wantHealed)
			}
			wantExactlyOnce(t, s, 200)
			wantSettled(t, s)
		})
	}
}
