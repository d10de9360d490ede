package loader_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// The ledger's decided entry is appended before the after-decide cut point
// (docs/design.md §6: fsync'd after decide), so a crash there leaves it with
// its row counts; the committed entry Recover writes carries them too (from
// the store's decision, which holds the counts), here for a crash before
// the commit (Recover commits) and after it (Recover finds the label
// VISIBLE).
func TestLedgerCountsSurviveCrash(t *testing.T) {
	t.Parallel()
	for _, fp := range []string{loader.FailAfterDecide, loader.FailAfterCommitBeforeLedger} {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			const rows, dead = 5, 2
			ctx := context.Background()
			e := newEnv(t)
			l := e.open(func(c *loader.Config) { c.Failpoints = crashAt(t, fp, 0) })
			recoverTo(t, ctx, l, 0)
			writeRows(t, ctx, l, 0, rows)
			err := l.CheckpointWith(ctx, pos(rows), loader.CheckpointInfo{DeadLettered: dead})
			if cerr := l.Close(ctx); !errors.Is(err, loader.ErrCrashed) && !errors.Is(cerr, loader.ErrCrashed) {
				t.Fatalf("no crash: checkpoint %v, close %v", err, cerr)
			}
			checkCounts(t, "decided entry after the crash", ledgerEntry(t, e.dir, 1, ledger.EventDecided), rows, dead)
			if en := ledgerEntry(t, e.dir, 1, ledger.EventCommitted); en != nil {
				t.Fatalf("committed entry before recovery: %+v", en)
			}

			l = e.open()
			defer l.Close(ctx)
			recoverTo(t, ctx, l, rows)
			committed := ledgerEntry(t, e.dir, 1, ledger.EventCommitted)
			checkCounts(t, "committed entry after recovery", committed, rows, dead)
			if committed.State != "VISIBLE" || committed.Attempts != 1 || committed.CommittedAt.IsZero() {
				t.Errorf("committed entry %+v: want VISIBLE, 1 attempt, a commit time", committed)
			}
			if id, lbl, ok := l.LastDecision(); id != 1 || lbl != committed.Label || !ok {
				t.Errorf("LastDecision = %d %q %v, want 1 %q committed", id, lbl, ok, committed.Label)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			e.checkExactlyOnce(rows)
		})
	}
}

// CheckpointWith records the dead-lettered count in the decided and the
// committed entry (background commit); an empty checkpoint's committed
// entry carries it too; Checkpoint records none; a negative count is
// refused without harm.
func TestCheckpointWithDeadLettered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	committed := make(chan uint64, 4)
	l := e.open(func(c *loader.Config) {
		c.Knobs = &loader.TestingKnobs{AfterCommit: func(id uint64, err error) {
			if err != nil {
				t.Errorf("commit %d: %v", id, err)
			}
			committed <- id
		}}
	})
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	if err := l.CheckpointWith(ctx, pos(0), loader.CheckpointInfo{DeadLettered: -1}); err == nil ||
		errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("negative count: %v, want a refusal that needs no Recover", err)
	}
	writeRows(t, ctx, l, 0, 3)
	if err := l.CheckpointWith(ctx, pos(3), loader.CheckpointInfo{DeadLettered: 4}); err != nil {
		t.Fatal(err)
	}
	if id := <-committed; id != 1 {
		t.Fatalf("committed %d, want 1", id)
	}
	// Checkpoint 2: no rows, every record dead-lettered.
	if err := l.CheckpointWith(ctx, pos(5), loader.CheckpointInfo{DeadLettered: 2}); err != nil {
		t.Fatal(err)
	}
	writeRows(t, ctx, l, 5, 7)
	if err := l.Checkpoint(ctx, pos(7)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, "decided 1", ledgerEntry(t, e.dir, 1, ledger.EventDecided), 3, 4)
	checkCounts(t, "committed 1", ledgerEntry(t, e.dir, 1, ledger.EventCommitted), 3, 4)
	if en := ledgerEntry(t, e.dir, 2, ledger.EventCommitted); en == nil || en.DeadLettered != 2 || en.RowsTotal != 0 {
		t.Fatalf("empty checkpoint 2: %+v, want a committed entry with 2 dead-lettered", en)
	}
	checkCounts(t, "committed 3", ledgerEntry(t, e.dir, 3, ledger.EventCommitted), 2, 0)
	// Records 3 and 4 were dead-lettered: every other id is loaded once.
	counts := e.counts()
	for _, id := range []int64{0, 1, 2, 5, 6} {
		if counts[id] != 1 {
			t.Errorf("id %d loaded %d times, want once", id, counts[id])
		}
	}
	if len(counts) != 5 {
		t.Errorf("table ids %v, want 0 1 2 5 6", counts)
	}
	e.checkNoRunningTxn()
}

// LastDecision names the last decided checkpoint, and says committed once
// its background commit is recorded.
func TestLastDecision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	fps := loader.NewFailpoints()
	h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	committed := make(chan struct{})
	l := e.open(func(c *loader.Config) {
		c.Failpoints = fps
		c.Knobs = &loader.TestingKnobs{AfterCommit: func(uint64, error) { close(committed) }}
	})
	defer l.Close(ctx)
	if id, lbl, ok := l.LastDecision(); id != 0 || lbl != "" || ok {
		t.Fatalf("before Recover: %d %q %v", id, lbl, ok)
	}
	recoverTo(t, ctx, l, 0)
	if id, _, _ := l.LastDecision(); id != 0 {
		t.Fatalf("new store: decision %d", id)
	}
	if err := drive(ctx, l, 0, 3, 3); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	want, err := e.owner().Label(1)
	if err != nil {
		t.Fatal(err)
	}
	if id, lbl, ok := l.LastDecision(); id != 1 || lbl != want || ok {
		t.Fatalf("commit blocked: %d %q %v, want 1 %q uncommitted", id, lbl, ok, want)
	}
	h.Release()
	<-committed
	if id, lbl, ok := l.LastDecision(); id != 1 || lbl != want || !ok {
		t.Fatalf("after commit: %d %q %v, want 1 %q committed", id, lbl, ok, want)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(3)
}

// OnCrash runs once, with the failpoint's name, at the cut point itself:
// the loader still holds its store (its lock is not released yet).
func TestOnCrashHook(t *testing.T) {
	t.Parallel()
	for _, fp := range []string{loader.FailMidStream, loader.FailAfterDecide, loader.FailMidCommit} {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			fps := crashAt(t, fp, 1)
			var mu sync.Mutex
			var names []string
			fps.OnCrash(func(name string) {
				mu.Lock()
				defer mu.Unlock()
				names = append(names, name)
				st, err := checkpoint.OpenFile(e.dir, e.owner())
				var le *checkpoint.LockedError
				if !errors.As(err, &le) {
					t.Errorf("store at the crash hook: %v, want still locked by the loader", err)
					if err == nil {
						st.Close()
					}
				}
			})
			e.crashRun(ctx, fps, 30, 5)
			mu.Lock()
			defer mu.Unlock()
			if len(names) != 1 || names[0] != fp {
				t.Fatalf("OnCrash calls %v, want [%s]", names, fp)
			}
		})
	}
}
