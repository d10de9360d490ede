package loader_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Review finding 6: ResolveAssume saves the store before it appends the
// "resolved" ledger entry. A crash between the two
// (FailResolveBeforeLedger) leaves the resolution applied and no evidence
// of the operator's decision; Recover appends the missing entry, once
// however often it runs, and with "visible" no "committed (recovery)"
// entry stands in for it.
func TestResolveCrashBeforeLedgerIsRepairedByRecover(t *testing.T) {
	t.Parallel()
	cases := []struct {
		assume  string
		fp      string
		between func(*env)
	}{
		{checkpoint.ResolvedVisible, loader.FailAfterCommitBeforeLedger, nil},
		{checkpoint.ResolvedAborted, loader.FailAfterDecide, func(e *env) { e.srv.TimeoutPrecommitted() }},
	}
	for _, tc := range cases {
		t.Run(tc.assume, func(t *testing.T) {
			t.Parallel()
			const n, every = 30, 5
			ctx := context.Background()
			e := newEnv(t)
			e.crashRun(ctx, crashAt(t, tc.fp, 1), n, every)
			if tc.between != nil {
				tc.between(e)
			}
			if e.srv.ExpireLabels(testDB) == 0 {
				t.Fatal("nothing expired")
			}
			l := e.open()
			_, err := l.Recover(ctx)
			var ue *loader.UnresolvedError
			if !errors.As(err, &ue) {
				t.Fatalf("Recover: %v, want *UnresolvedError", err)
			}
			l.Close(ctx)
			st, err := checkpoint.OpenFile(e.dir, e.owner())
			if err != nil {
				t.Fatal(err)
			}
			fps := crashAt(t, loader.FailResolveBeforeLedger, 0)
			_, err = loader.ResolveAssume(ctx, st, ue.CheckpointID, tc.assume, loader.ResolveBy("tester"),
				loader.ResolveLedger(e.dir), loader.ResolveFailpoints(fps))
			st.Close()
			if !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("ResolveAssume with %s armed: %v, want ErrCrashed", loader.FailResolveBeforeLedger, err)
			}
			if ev := ledgerEvents(t, e.dir); ev[ledger.EventResolved] != 0 {
				t.Fatalf("ledger events %v after the crash, want no resolved entry yet", ev)
			}
			e.runToEnd(ctx, n, every)
			l = e.open() // a second start: the repair is not repeated
			if _, err := l.Recover(ctx); err != nil {
				t.Fatalf("second Recover: %v", err)
			}
			l.Close(ctx)
			e.checkExactlyOnce(n)
			entries, _, err := ledger.ReadFile(e.dir)
			if err != nil {
				t.Fatal(err)
			}
			var resolved []ledger.Entry
			for _, en := range entries {
				if en.Event == ledger.EventResolved {
					resolved = append(resolved, en)
				}
				if en.Checkpoint == ue.CheckpointID && en.Event == ledger.EventCommitted && en.Label == ue.Label &&
					en.TxnID == ue.TxnID && tc.assume == checkpoint.ResolvedVisible {
					t.Errorf("committed entry %+v for a checkpoint the operator resolved visible: the resolved entry stands for it", en)
				}
			}
			if len(resolved) != 1 {
				t.Fatalf("resolved entries %+v, want one", resolved)
			}
			r := resolved[0]
			if r.Checkpoint != ue.CheckpointID || r.Label != ue.Label || r.TxnID != ue.TxnID ||
				!strings.Contains(r.Note, "operator assumed "+tc.assume+" (by tester)") || !strings.Contains(r.Note, "recovery") {
				t.Errorf("repaired resolved entry %+v, want checkpoint %d label %s txn %d naming the operator",
					r, ue.CheckpointID, ue.Label, ue.TxnID)
			}
		})
	}
}
