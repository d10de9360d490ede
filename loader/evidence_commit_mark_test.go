package loader_test

import (
	"context"
	"errors"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Chaos campaign, seed 20260601, 150 cycles: the state sink's ledger
// totalled one checkpoint's rows (49) fewer than the table held. The
// store's commit mark and the ledger's committed entry are two durable
// writes; a kill between them (in the background commit, or in Recover
// committing a decided checkpoint) left a checkpoint that the store calls
// committed, so every later Recover skipped it, and whose committed entry
// the ledger never got (docs/design.md §6: one row per checkpoint). Recover now
// appends the missing entry, with the counters the decision saved, once.
// (The decide window, between the save of the decision and the decided
// entry, is TestDecidedInStoreButNotInLedger.)
func TestCommitMarkedInStoreButNotInLedger(t *testing.T) {
	t.Parallel()
	const rows = 5
	cases := map[string]struct {
		// first runs the checkpoint until the commit mark was saved without
		// its ledger entry.
		first func(t *testing.T, ctx context.Context, e *env)
	}{
		"background-commit": {first: func(t *testing.T, ctx context.Context, e *env) {
			committed := make(chan error, 1)
			st := &lostAckStore{match: marksCommitted}
			l := e.open(func(c *loader.Config) {
				st.Store = c.Store
				c.Store = st
				c.Knobs = &loader.TestingKnobs{AfterCommit: func(_ uint64, err error) { committed <- err }}
			})
			recoverTo(t, ctx, l, 0)
			if err := drive(ctx, l, 0, rows, rows); err != nil {
				t.Fatal(err)
			}
			if err := <-committed; !errors.Is(err, errLostAck) {
				t.Fatalf("background commit: %v, want the lost acknowledgement", err)
			}
			if err := l.Close(ctx); !errors.Is(err, errLostAck) {
				t.Fatalf("close: %v, want the commit's error", err)
			}
		}},
		"recovery-commit": {first: func(t *testing.T, ctx context.Context, e *env) {
			e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 0), rows, rows)
			st := &lostAckStore{match: marksCommitted}
			l := e.open(func(c *loader.Config) { st.Store, c.Store = c.Store, st })
			if _, err := l.Recover(ctx); !errors.Is(err, errLostAck) {
				t.Fatalf("recover: %v, want the lost acknowledgement", err)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			c.first(t, ctx, e)
			if got := entriesOf(t, e.dir, 1, ledger.EventCommitted); len(got) != 0 {
				t.Fatalf("setup: committed entries %+v before the restart, want none", got)
			}
			// Two restarts: the first appends the missing entry, the second
			// finds it and appends nothing.
			e.restarts(ctx, 2, rows)
			got := entriesOf(t, e.dir, 1, ledger.EventCommitted)
			if len(got) != 1 {
				t.Fatalf("committed entries of checkpoint 1: %+v, want exactly one", got)
			}
			checkCounts(t, "repaired committed entry", &got[0], rows, 0)
			if got[0].State != "VISIBLE" || got[0].CommittedAt.IsZero() {
				t.Errorf("repaired entry %+v: want VISIBLE with a commit time", got[0])
			}
			e.checkExactlyOnce(rows)
		})
	}
}
