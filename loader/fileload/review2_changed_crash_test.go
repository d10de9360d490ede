package fileload

import (
	"errors"
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// review2: a crash at every cut point, then an input file changed before
// the rerun. A load that decided nothing is planned anew and loads the
// files as they are now exactly once; one that decided or committed a
// round settles it (committed by id) and is refused, with no row twice
// and nothing left PREPARE or PRECOMMITTED.
func TestReview2ChangedFileAfterCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	beforeDecision := map[string]bool{loader.FailBeforeAnnounce: true, loader.FailAfterAnnounce: true,
		loader.FailMidStream: true, loader.FailAfterPrecommit: true, loader.FailBeforeDecide: true}
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
				o.Split, o.AssumedRate = true, 1
			}
			fp := loader.NewFailpoints()
			h, err := fp.Arm(cc.name, loader.Crash().Skip(cc.skip))
			if err != nil {
				t.Fatal(err)
			}
			o.Failpoints = fp
			if _, err := Run(ctx(t), o); !errors.Is(err, loader.ErrCrashed) || h.Hits() != 1 {
				t.Fatalf("Run = %v with %d crash hits, want a crash at %s", err, h.Hits(), cc.name)
			}
			csvFile(t, dir, "c.csv", 160, 400, true) // changed: more rows
			o.Failpoints = nil
			res, err := Run(ctx(t), o)
			if beforeDecision[cc.name] && !cc.split {
				// (A crash before the announcement left no store: a
				// fresh plan, not a replan.)
				if err != nil || res.Replanned != (cc.name != loader.FailBeforeAnnounce) {
					t.Fatalf("rerun = %+v, %v: want the undecided load planned anew", res, err)
				}
				wantExactlyOnce(t, s, 400)
				wantSettled(t, s)
				return
			}
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("rerun = %+v, %v: want the changed file refused (a round was decided)", res, err)
			}
			if me.Rows == 0 {
				t.Fatalf("refusal %v counts no committed row", me)
			}
			wantExactlyOnce(t, s, int(me.Rows))
			wantSettled(t, s)
		})
	}
}
