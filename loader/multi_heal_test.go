package loader_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// A heal keeps the txns Recover committed just before as committed: the
// heal's decision does not write them back uncommitted, its background
// commit does not commit them again, and the ledger has one "committed"
// entry per txn of the healed checkpoint (review of branch multi,
// finding 3). Every table ends exactly right.
func TestMultiTableHealKeepsTxnsRecoverCommitted(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every) // decision 2 made, not committed
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Decided
	victim := d.Txns[1]
	if err := e.client.AbortTxn(ctx, testDB, victim.TxnID); err != nil {
		t.Fatal(err)
	}
	var decidedHeal *checkpoint.Decision
	l := e.open(func(c *loader.Config) {
		c.Knobs = &loader.TestingKnobs{AfterDecide: func(id uint64) {
			s, err := checkpoint.ReadFile(e.dir)
			if err == nil && id == 2 {
				c := s.Decided.Clone()
				decidedHeal = &c
			}
		}}
	})
	if _, err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := driveMulti(ctx, l, every, n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
	if decidedHeal == nil {
		t.Fatal("the heal of checkpoint 2 was never decided")
	}
	for _, tx := range decidedHeal.Txns {
		if tx.Table != victim.Table && !tx.Committed {
			t.Errorf("heal decision wrote txn %s (committed by Recover) back as uncommitted: %+v", tx.Table, tx)
		}
	}
	per := map[string]int{}
	for _, en := range entriesOf(t, e.dir, 2, ledger.EventCommitted) {
		per[en.DB+"."+en.Table]++
	}
	for _, tx := range d.Txns {
		if per[tx.Table] != 1 {
			t.Errorf("checkpoint 2 table %s has %d committed ledger entries, want 1", tx.Table, per[tx.Table])
		}
	}
}

// healSetup crashes after decision 2 (tables m0, m3, m4 over [6, 12)) and
// has Doris abort the txn of m3: the heal replays [6, 12) into m3 only.
// It returns the decision, m3's txn and a recovered Loader healing it.
func healSetup(t *testing.T, e *env, ctx context.Context, mut ...func(*loader.Config)) (checkpoint.Decision, checkpoint.Txn, *loader.Loader) {
	t.Helper()
	const n, every = 12, 6
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Decided
	if d.ID != 2 || len(d.Txns) != 3 || d.Txns[1].Table != testDB+".m3" {
		t.Fatalf("setup: decided %+v", d)
	}
	victim := d.Txns[1]
	if err := e.client.AbortTxn(ctx, testDB, victim.TxnID); err != nil {
		t.Fatal(err)
	}
	l := e.open(mut...)
	recoverTo(t, ctx, l, every)
	return *d, victim, l
}

// healMismatches returns every *HealMismatchError in err's tree.
func healMismatches(err error) []*loader.HealMismatchError {
	var out []*loader.HealMismatchError
	var walk func(error)
	walk = func(err error) {
		if hm, ok := err.(*loader.HealMismatchError); ok {
			out = append(out, hm)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// replayHeal writes records [6, to) of the heal, the table of each from
// route (skipping a record route maps to ""), then checkpoints at end.
func replayHeal(ctx context.Context, l *loader.Loader, to int, end json.RawMessage, route func(int) string) error {
	for i := 6; i < to; i++ {
		tbl := route(i)
		if tbl == "" {
			continue
		}
		if err := l.WriteTo(ctx, tbl, row(i)); err != nil {
			return err
		}
	}
	return l.Checkpoint(ctx, end)
}

// checkHealRefused checks err refuses the heal of checkpoint 2 (an error
// wrapping ErrNeedRecover, with the mismatches want: table -> decided,
// replayed) and that nothing of it was decided: decision 2 still holds
// victim's txn, uncommitted, and no txn runs in any table.
func checkHealRefused(t *testing.T, e *env, err error, victim checkpoint.Txn, want map[string][2]int64) {
	t.Helper()
	if !errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("heal = %v, want a refusal wrapping ErrNeedRecover", err)
	}
	got := map[string][2]int64{}
	for _, hm := range healMismatches(err) {
		if hm.CheckpointID != 2 || hm.Label == "" || hm.TxnID == 0 {
			t.Errorf("mismatch %+v: want checkpoint 2 with its label and txn", hm)
		}
		got[hm.Table] = [2]int64{hm.Decided, hm.Replayed}
	}
	if len(got) != len(want) {
		t.Errorf("heal refused with %v (table: decided, replayed), want %v: %v", got, want, err)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("table %s: decided, replayed = %v, want %v", k, got[k], w)
		}
	}
	st, rerr := checkpoint.ReadFile(e.dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if tx := st.Decided.Txn(victim.Table); st.Decided.ID != 2 || tx == nil || tx.Committed || tx.TxnID != victim.TxnID {
		t.Errorf("after the refused heal the store holds %+v, want decision 2 with %s's txn %d uncommitted",
			st.Decided, victim.Table, victim.TxnID)
	}
	e.checkNoRunningTxn()
}

// healAgain recovers l (the refused heal is healed again) and replays the
// range with the routing of the decision, then finishes: every table
// exactly right.
func healAgain(t *testing.T, e *env, ctx context.Context, l *loader.Loader) {
	t.Helper()
	const n, every = 12, 6
	recoverTo(t, ctx, l, every)
	if err := driveMulti(ctx, l, every, n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
}

// A heal whose replay routes the aborted table's rows to a table whose txn
// is committed (the routing changed since the decision) is refused before
// anything is decided: the aborted table got no row, and the committed
// table's skipped rows are not its count (review of branch multi, finding
// 1: the rows were skipped as "committed" and the aborted txn silently
// left the decision). With the routing of the decision back, the heal
// loads every row once.
func TestMultiTableHealRefusesRoutingChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMultiEnv(t)
	_, victim, l := healSetup(t, e, ctx)
	defer l.Close(ctx)
	err := replayHeal(ctx, l, 12, pos(12), func(i int) string {
		if multiTable(i) == "m3" {
			return "m0" // the new routing
		}
		return multiTable(i)
	})
	checkHealRefused(t, e, err, victim, map[string][2]int64{testDB + ".m3": {2, 0}, testDB + ".m0": {2, 4}})
	healAgain(t, e, ctx, l)
}

// A heal whose replay brings fewer rows for the aborted table than it was
// decided with (part of the range was compacted or deleted from the
// source) is refused, naming the decided and replayed counts.
func TestMultiTableHealRefusesShortReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMultiEnv(t)
	_, victim, l := healSetup(t, e, ctx)
	defer l.Close(ctx)
	err := replayHeal(ctx, l, 12, pos(12), func(i int) string {
		if i == 7 {
			return "" // compacted away
		}
		return multiTable(i)
	})
	checkHealRefused(t, e, err, victim, map[string][2]int64{testDB + ".m3": {2, 1}})
	healAgain(t, e, ctx, l)
}

// A heal that keeps committed txns must replay exactly the decided range:
// ending it elsewhere would lose the committed tables' rows beyond a
// longer end, or load them again after a shorter one. It is refused.
func TestMultiTableHealRefusesOtherEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMultiEnv(t)
	_, victim, l := healSetup(t, e, ctx)
	defer l.Close(ctx)
	err := replayHeal(ctx, l, 10, pos(10), multiTable)
	var hm *loader.HealMismatchError
	if !errors.As(err, &hm) || !hm.Committed || next(t, hm.ReplayEnd) != 10 || next(t, hm.End) != 12 {
		t.Fatalf("heal ending at 10 of checkpoint 2 decided over [6, 12) = %v, want a refusal naming both ends", err)
	}
	checkHealRefused(t, e, err, victim, map[string][2]int64{hm.Table: {0, 0}})
	healAgain(t, e, ctx, l)
}

// A decision saved without counts (an older doris-sink) can only be
// checked for an aborted table that gets no row: that is still refused,
// and a replay with the decision's routing heals.
func TestMultiTableHealWithoutCountsRefusesEmptyTable(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every)
	stripCounts(t, e)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	victim := st.Decided.Txns[1]
	if err := e.client.AbortTxn(ctx, testDB, victim.TxnID); err != nil {
		t.Fatal(err)
	}
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, every)
	err = replayHeal(ctx, l, 12, pos(12), func(i int) string {
		if multiTable(i) == "m3" {
			return "m0"
		}
		return multiTable(i)
	})
	checkHealRefused(t, e, err, victim, map[string][2]int64{victim.Table: {-1, 0}})
	healAgain(t, e, ctx, l)
}

// Every txn of a multi-table decision whose label expired is refused by
// Recover on its own (*UnresolvedError naming its table and the number of
// txns, so the hint carries --table) and resolved on its own
// (ResolveTable): the txn whose rows are in its table as visible, the
// others as aborted; the heal then replays only the aborted tables and
// every table ends exactly right (review of branch multi, finding 5).
func TestMultiTableResolveEachTxnThenHeal(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every) // decision 2 of 3 tables, not committed
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Decided
	visible := d.Txns[0]
	if err := e.client.CommitTxn(ctx, testDB, visible.TxnID); err != nil {
		t.Fatal(err)
	}
	e.srv.TimeoutPrecommitted()
	if e.srv.ExpireLabels(testDB) == 0 {
		t.Fatal("nothing expired")
	}
	for round := 0; ; round++ {
		if round > len(d.Txns) {
			t.Fatal("no progress")
		}
		l := e.open()
		_, err := l.Recover(ctx)
		if err == nil {
			if err := driveMulti(ctx, l, every, n, every); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			break
		}
		l.Close(ctx)
		var ue *loader.UnresolvedError
		if !errors.As(err, &ue) {
			t.Fatalf("Recover: %v", err)
		}
		tx := d.Txn(ue.Table)
		if tx == nil || tx.Label != ue.Label || tx.TxnID != ue.TxnID || ue.Txns != len(d.Txns) {
			t.Fatalf("unresolved %+v does not name a txn of decision %+v", ue, d)
		}
		assume := checkpoint.ResolvedAborted
		if ue.Table == visible.Table {
			assume = checkpoint.ResolvedVisible
		}
		s, err := checkpoint.OpenFile(e.dir, e.owner())
		if err != nil {
			t.Fatal(err)
		}
		_, err = loader.ResolveAssume(ctx, s, ue.CheckpointID, assume, loader.ResolveBy("tester"), loader.ResolveTable(ue.Table))
		s.Close()
		if err != nil {
			t.Fatalf("ResolveAssume %s table %s: %v", assume, ue.Table, err)
		}
	}
	e.checkMultiExactlyOnce(n)
}

// A checkpoint's dead-lettered count is on the ledger entries of its
// decision's first txn (m0 here). A heal that keeps that txn committed
// writes no new entry for it and 0 dead letters on the healed txn's, so
// the latest entry of each txn (what verify sums) still counts the
// checkpoint's dead letters once; the heal's decision records its own
// count.
func TestMultiTableHealCountsDeadLettersOnce(t *testing.T) {
	t.Parallel()
	const n, every, dead = 12, 6, 3
	ctx := context.Background()
	e := newMultiEnv(t)
	drive := func(l *loader.Loader, from int) error {
		for i := from; i < n; i++ {
			if err := l.WriteTo(ctx, multiTable(i), row(i)); err != nil {
				return err
			}
			if (i+1)%every == 0 {
				if err := l.CheckpointWith(ctx, pos(i+1), loader.CheckpointInfo{DeadLettered: dead}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	l := e.open(func(c *loader.Config) { c.Failpoints = crashAt(t, loader.FailAfterDecide, 1) })
	recoverTo(t, ctx, l, 0)
	if err := drive(l, 0); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("drive: %v, want a crash after decision 2", err)
	}
	l.Close(ctx)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Decided
	victim := d.Txns[1] // m3; Txns[0] (m0) carries the dead letters
	if err := e.client.AbortTxn(ctx, testDB, victim.TxnID); err != nil {
		t.Fatal(err)
	}
	l = e.open()
	recoverTo(t, ctx, l, every)
	if err := drive(l, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	latest := map[string]ledger.Entry{}
	for _, en := range entries {
		if en.Checkpoint == 2 && en.Event != ledger.EventAborted {
			latest[en.Label] = en
		}
	}
	var sum int64
	for _, en := range latest {
		sum += en.DeadLettered
	}
	if len(latest) != len(d.Txns) || sum != dead {
		t.Errorf("checkpoint 2's latest entry per txn %+v: %d dead letters, want %d once", latest, sum, dead)
	}
	st, err = checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Decided.Counts; st.Decided.ID != 2 || c == nil || c.DeadLettered != dead {
		t.Errorf("healed decision %+v, want %d dead letters", st.Decided, dead)
	}
}

// With a decision without counts a replay cannot be compared with it, so
// a heal row of a table the decision has no txn of still fails the heal
// at once (the routing changed), rather than being refused as a row the
// decision did not load; with the routing of the decision it heals.
func TestMultiTableHealWithoutCountsRefusesTableWithoutTxn(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every)
	stripCounts(t, e)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.AbortTxn(ctx, testDB, st.Decided.Txns[1].TxnID); err != nil {
		t.Fatal(err)
	}
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, every)
	err = l.WriteTo(ctx, "m1", row(6)) // m1 has no txn in decision 2 (m0, m3, m4)
	var ut *loader.UnknownTableError
	if !errors.Is(err, loader.ErrNeedRecover) || errors.As(err, &ut) {
		t.Fatalf("heal row for m1 = %v, want the heal failed (routing changed)", err)
	}
	e.checkNoRunningTxn()
	healAgain(t, e, ctx, l)
}
