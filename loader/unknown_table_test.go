package loader_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// A row for a table Doris does not have is refused at its first row with
// an *UnknownTableError naming the table (Doris refuses its Stream Load at
// begin, docs/doris-facts.md §1.5): the checkpoint goes on with its other
// tables, is decided without a txn of that table, and every other row is
// loaded exactly once; no txn lingers. A later row of that table is
// refused the same way (the begin is tried again).
func TestWriteToUnknownTableKeepsCheckpoint(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	for i := range n {
		if i == 3 || i == 9 {
			err := l.WriteTo(ctx, "nosuch", row(1000+i))
			var ut *loader.UnknownTableError
			if !errors.As(err, &ut) || ut.Table != testDB+".nosuch" || ut.Label == "" ||
				!errors.Is(err, doris.ErrNotFound) || errors.Is(err, loader.ErrNeedRecover) {
				t.Fatalf("WriteTo nosuch = %v, want an *UnknownTableError of %s.nosuch, not ErrNeedRecover", err, testDB)
			}
		}
		if err := l.WriteTo(ctx, multiTable(i), row(i)); err != nil {
			t.Fatal(err)
		}
		if (i+1)%every == 0 {
			if err := l.Checkpoint(ctx, pos(i+1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Decided.Txn(testDB+".nosuch") != nil || slices.ContainsFunc(st.Announced,
		func(a checkpoint.Announcement) bool { return a.Table == testDB+".nosuch" }) {
		t.Errorf("store after the run: decided %+v, announced %+v: want no txn or leftover announcement of nosuch",
			st.Decided, st.Announced)
	}
}

// driveSkippingUnknown is driveMulti with a row for table nosuch (which
// Doris does not have) before record 8, refused with an
// *UnknownTableError (what the Kafka connector dead-letters); want is the
// HealOf the refusal must carry.
func driveSkippingUnknown(t *testing.T, ctx context.Context, l *loader.Loader, from, n, every int, healOf uint64) error {
	t.Helper()
	for i := from; i < n; i++ {
		if i == 8 {
			err := l.WriteTo(ctx, "nosuch", row(1000))
			var ut *loader.UnknownTableError
			if !errors.As(err, &ut) || ut.Table != testDB+".nosuch" || ut.HealOf != healOf || errors.Is(err, loader.ErrNeedRecover) {
				t.Fatalf("WriteTo nosuch = %v, want an *UnknownTableError (HealOf %d), not ErrNeedRecover", err, healOf)
			}
		}
		if err := l.WriteTo(ctx, multiTable(i), row(i)); err != nil {
			return err
		}
		if (i+1)%every == 0 || i+1 == n {
			if err := l.Checkpoint(ctx, pos(i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// A decided checkpoint that refused a row of an unknown table (its record
// dead-lettered) heals: the replayed row of that table, which the decision
// has no txn of, is refused the same way (HealOf, no Stream Load), and
// every other row is loaded exactly once.
func TestHealOfCheckpointWithUnknownTableRow(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	l := e.open(func(c *loader.Config) { c.Failpoints = crashAt(t, loader.FailAfterDecide, 1) })
	recoverTo(t, ctx, l, 0)
	if err := driveSkippingUnknown(t, ctx, l, 0, n, every, 0); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("drive: %v, want a crash after decision 2", err)
	}
	l.Close(ctx)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.AbortTxn(ctx, testDB, st.Decided.Txns[1].TxnID); err != nil {
		t.Fatal(err)
	}
	l = e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, every)
	if err := driveSkippingUnknown(t, ctx, l, every, n, every, 2); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
}

// In a heal, rows of an aborted table routed to a table the decision has
// no txn of (a routing change) are not loaded there, and the aborted
// table's txn comes up short: the heal is refused (*HealMismatchError),
// nothing is decided, and with the routing of the decision it heals.
func TestHealRefusesRoutingToTableWithoutTxn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMultiEnv(t)
	_, victim, l := healSetup(t, e, ctx)
	defer l.Close(ctx)
	var refused int
	err := replayHeal(ctx, l, 12, pos(12), func(i int) string {
		if multiTable(i) != "m3" {
			return multiTable(i)
		}
		err := l.WriteTo(ctx, "m9", row(i))
		var ut *loader.UnknownTableError
		if errors.As(err, &ut) && ut.HealOf == 2 {
			refused++
		} else {
			t.Errorf("heal row for m9 = %v, want an *UnknownTableError of the heal", err)
		}
		return ""
	})
	if refused != 2 {
		t.Errorf("%d rows refused for m9, want 2", refused)
	}
	checkHealRefused(t, e, err, victim, map[string][2]int64{victim.Table: {2, 0}})
	healAgain(t, e, ctx, l)
}
