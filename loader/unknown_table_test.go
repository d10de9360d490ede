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
