package loader_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// The multi-table tests route record i to one of five tables, two records
// at a time: with a checkpoint every 6 records, each checkpoint touches
// three of the five tables, so every checkpoint has a table first seen in
// it (announced with its own store write) and a table of the previous
// checkpoint it does not touch (which must get no txn).
const multiTables = 5

// multiTable is the table of record i ("m0" … "m4"; "m2" is a Unique Key
// table, the others Duplicate Key).
func multiTable(i int) string { return fmt.Sprintf("m%d", (i/2)%multiTables) }

// newMultiEnv is newEnv with the five tables of multiTable created.
func newMultiEnv(t *testing.T, opts ...doristest.Opt) *env {
	t.Helper()
	e := newEnv(t, opts...)
	for k := range multiTables {
		ddl := fmt.Sprintf("CREATE TABLE m%d (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", k)
		if k == 2 {
			ddl = "CREATE TABLE m2 (id BIGINT, v VARCHAR(32)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 " +
				`PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
		}
		if err := e.srv.CreateTable(testDB, ddl); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// driveFunc writes records [from, n) with a checkpoint every `every`
// records (and at n).
type driveFunc func(ctx context.Context, l *loader.Loader, from, n, every int) error

// driveRows is a driveFunc writing record i with write.
func driveRows(ctx context.Context, l *loader.Loader, from, n, every int, write func(i int) error) error {
	for i := from; i < n; i++ {
		if err := write(i); err != nil {
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

// driveMulti writes records [from, n) to their tables.
func driveMulti(ctx context.Context, l *loader.Loader, from, n, every int) error {
	return driveRows(ctx, l, from, n, every, func(i int) error { return l.WriteTo(ctx, multiTable(i), row(i)) })
}

// crashRunMulti is crashRun routing to the five tables.
func (e *env) crashRunMulti(ctx context.Context, fps *loader.Failpoints, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	e.crashRunWith(ctx, driveMulti, fps, n, every, mut...)
}

// crashRunWith runs drive from the recovered position with fps armed and
// requires a crash.
func (e *env) crashRunWith(ctx context.Context, drive driveFunc, fps *loader.Failpoints, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	l := e.open(append(mut, func(c *loader.Config) { c.Failpoints = fps })...)
	p, err := l.Recover(ctx)
	if err == nil {
		err = drive(ctx, l, next(e.t, p), n, every)
	}
	cerr := l.Close(ctx)
	if !errors.Is(err, loader.ErrCrashed) && !errors.Is(cerr, loader.ErrCrashed) {
		e.t.Fatalf("loader did not crash: drive: %v, close: %v", err, cerr)
	}
}

// runToEndMulti is runToEnd routing to the five tables; after every
// Recover no txn of any table is PREPARE or PRECOMMITTED.
func (e *env) runToEndMulti(ctx context.Context, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	e.runToEndWith(ctx, driveMulti, n, every, mut...)
}

// runToEndWith recovers and runs drive until it reaches n (at most 20
// recoveries); after every Recover no txn of any table is PREPARE or
// PRECOMMITTED.
func (e *env) runToEndWith(ctx context.Context, drive driveFunc, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	l := e.open(mut...)
	defer l.Close(ctx)
	for round := 0; ; round++ {
		if round > 20 {
			e.t.Fatal("no progress after 20 recoveries")
		}
		p, err := l.Recover(ctx)
		if err != nil {
			e.t.Fatalf("recover: %v", err)
		}
		e.checkNoRunningTxn()
		err = drive(ctx, l, next(e.t, p), n, every)
		if err == nil {
			break
		}
		if !errors.Is(err, loader.ErrNeedRecover) {
			e.t.Fatalf("drive: %v", err)
		}
	}
	if err := l.Close(ctx); err != nil {
		e.t.Fatalf("close: %v", err)
	}
}

// checkMultiExactlyOnce checks every table holds exactly its records of
// [0, n), once each, and that no txn lingers PREPARE or PRECOMMITTED (the
// Flink connector's PR #362 bug: txns of tables missing from its state).
func (e *env) checkMultiExactlyOnce(n int) {
	e.t.Helper()
	for k := range multiTables {
		table := fmt.Sprintf("m%d", k)
		rows, err := e.srv.Rows(testDB, table)
		if err != nil {
			e.t.Fatal(err)
		}
		counts := map[int64]int{}
		for _, r := range rows {
			counts[r[0].(int64)]++
		}
		var missing, dups []int
		for i := range n {
			if multiTable(i) != table {
				continue
			}
			switch c := counts[int64(i)]; {
			case c == 0:
				missing = append(missing, i)
			case c > 1:
				dups = append(dups, i)
			}
			delete(counts, int64(i))
		}
		if len(missing) > 0 || len(dups) > 0 || len(counts) > 0 {
			e.t.Errorf("table %s: missing %v, duplicated %v, unexpected %v", table, missing, dups, counts)
		}
	}
	e.checkNoRunningTxn()
}

// touched returns the sorted db.table names records [from, to) route to.
func touched(from, to int) []string {
	var names []string
	for i := from; i < to; i++ {
		if n := testDB + "." + multiTable(i); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// For every cut point of docs/design.md §2, a crash with five tables open
// (at the first hit, and at later hits: mid-checkpoint, with some tables'
// loads begun or precommitted and others not), then a restart on the same
// store and emulator, leaves every table exactly right and no txn
// lingering in any table.
func TestMultiTableCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	for _, fp := range loader.AllFailpoints {
		for _, skip := range []int{0, 2, 4} {
			t.Run(fmt.Sprintf("%s/skip%d", fp, skip), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e := newMultiEnv(t)
				fps := loader.NewFailpoints()
				h, err := fps.Arm(fp, loader.Crash().Skip(skip))
				if err != nil {
					t.Fatal(err)
				}
				e.crashRunMulti(ctx, fps, n, every)
				if h.Hits() != 1 || fps.Hits(fp) != skip+1 {
					t.Fatalf("failpoint %s acted %d times, passed %d times", fp, h.Hits(), fps.Hits(fp))
				}
				w := &invariantWatch{Doris: e.client, t: t, dir: e.dir, txnLabel: map[int64]string{}}
				e.doris = w
				e.runToEndMulti(ctx, n, every, func(c *loader.Config) { c.Store = &orderedStore{Store: c.Store, e: e} })
				e.checkMultiExactlyOnce(n)
			})
		}
	}
}

// An injected error at each cut point fails (or, in the commit loop,
// delays) one checkpoint of five tables; the same loader recovers and
// every table ends exactly right.
func TestMultiTableErrorAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	for _, fp := range loader.AllFailpoints {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newMultiEnv(t)
			fps := loader.NewFailpoints()
			h, err := fps.Arm(fp, loader.ReturnError(nil).Times(1).Skip(3))
			if err != nil {
				t.Fatal(err)
			}
			e.runToEndMulti(ctx, n, every, func(c *loader.Config) { c.Failpoints = fps })
			if h.Hits() != 1 {
				t.Fatalf("failpoint %s acted %d times", fp, h.Hits())
			}
			e.checkMultiExactlyOnce(n)
		})
	}
}

// One decision per checkpoint holds exactly the txns of the tables the
// checkpoint touched: a table touched in N but not in N+1 gets no txn
// (and no label at Doris) in N+1. Each txn's label is the table's label of
// the checkpoint, and the ledger has one decided and one committed entry
// per txn, naming its table.
func TestMultiTableUntouchedTableGetsNoTxn(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.runToEndMulti(ctx, n, every)
	e.checkMultiExactlyOnce(n)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	decisions := append(slices.Clone(st.History), *st.Decided)
	if len(decisions) != n/every {
		t.Fatalf("%d decisions, want %d", len(decisions), n/every)
	}
	for k, d := range decisions {
		want := touched(k*every, (k+1)*every)
		var got []string
		for _, tx := range d.Txns {
			got = append(got, tx.Table)
			db, tbl, _ := checkpoint.SplitTable(tx.Table)
			if lbl := fmt.Sprintf("%s:%s-%s:0:%d", e.job, db, tbl, d.ID); tx.Label != lbl || !tx.Committed {
				t.Errorf("checkpoint %d txn %+v: want label %s, committed", d.ID, tx, lbl)
			}
			if tx.Counts == nil || tx.Counts.RowsLoaded != int64(strings.Count(strings.Join(tablesOf(k*every, (k+1)*every), ","), tbl)) {
				t.Errorf("checkpoint %d txn %s counts %+v", d.ID, tx.Table, tx.Counts)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("checkpoint %d has txns of %v, want exactly the touched tables %v", d.ID, got, want)
		}
		if d.Counts == nil || d.Counts.RowsLoaded != every {
			t.Errorf("checkpoint %d totals %+v, want %d rows", d.ID, d.Counts, every)
		}
		// No label of an untouched table was ever used at Doris.
		for k := range multiTables {
			name := fmt.Sprintf("%s.m%d", testDB, k)
			if slices.Contains(want, name) {
				continue
			}
			lbl := fmt.Sprintf("%s:%s-m%d:0:%d", e.job, testDB, k, d.ID)
			if s := e.srv.LabelState(testDB, lbl); s != doris.TxnUnknown {
				t.Errorf("untouched table %s has label %s in Doris (%s)", name, lbl, s)
			}
		}
		for _, event := range []string{ledger.EventDecided, ledger.EventCommitted} {
			es := entriesOf(t, e.dir, d.ID, event)
			var tables []string
			for _, en := range es {
				tables = append(tables, en.DB+"."+en.Table)
				if en.Txns != len(want) {
					t.Errorf("checkpoint %d %s entry says %d txns, want %d", d.ID, event, en.Txns, len(want))
				}
			}
			slices.Sort(tables)
			if !slices.Equal(tables, want) {
				t.Errorf("checkpoint %d %s entries name %v, want one per txn %v", d.ID, event, tables, want)
			}
		}
	}
}

// tablesOf lists the table of each record of [from, to).
func tablesOf(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, multiTable(i))
	}
	return out
}

// A decided checkpoint of three tables whose txn Doris aborted in one
// table only ("timeout by txn manager" for that txn) is healed in that
// table only: Recover commits the other two, the replayed range loads the
// aborted table again under the same label, and the rows of the others
// are skipped (counted in the healed entry), so no table holds a
// duplicate.
func TestMultiTableHealOnlyAbortedTable(t *testing.T) {
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
	if d.ID != 2 || len(d.Txns) != 3 || d.Committed {
		t.Fatalf("setup: decided %+v", d)
	}
	victim := d.Txns[1]
	if err := e.client.AbortTxn(ctx, testDB, victim.TxnID); err != nil {
		t.Fatal(err)
	}
	var ra recoverActions
	l := e.open(ra.knobs)
	p, err := l.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := next(t, p); got != every {
		t.Fatalf("recover position %d, want the healed checkpoint's start %d", got, every)
	}
	if !ra.has("ABORTED:heal") || !ra.has("PRECOMMITTED:commit") {
		t.Fatalf("recover actions %v", ra.got)
	}
	if id, end, ok := l.Healing(); !ok || id != 2 || next(t, end) != n {
		t.Fatalf("Healing = %d, %s, %t", id, end, ok)
	}
	if err := driveMulti(ctx, l, every, n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
	st, err = checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	d = st.Decided
	for _, tx := range d.Txns {
		healed := tx.Table == victim.Table
		if !tx.Committed || (tx.Healed == 1) != healed || (healed && tx.TxnID == victim.TxnID) {
			t.Errorf("txn after the heal %+v (victim %s txn %d)", tx, victim.Table, victim.TxnID)
		}
	}
	healedEntries := entriesOf(t, e.dir, 2, ledger.EventHealed)
	if len(healedEntries) != 1 || healedEntries[0].DB+"."+healedEntries[0].Table != victim.Table ||
		!strings.Contains(healedEntries[0].Note, "4 rows of tables whose txn was committed skipped") {
		t.Fatalf("healed entries %+v: want one, of %s, counting the 4 skipped rows", healedEntries, victim.Table)
	}
}

// A precommit failing in one table aborts every txn of the checkpoint, in
// every table (none lingers PREPARE or PRECOMMITTED), and after Recover
// the checkpoint loads again, exactly once everywhere.
func TestMultiTablePrecommitFailureAbortsEveryTable(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.fault(doristest.Fault{Op: doristest.FaultPrecommit, DB: testDB, Table: "m1",
		Err: &doristest.FaultErr{Message: "injected precommit failure"}})
	l := e.open()
	recoverTo(t, ctx, l, 0)
	err := driveMulti(ctx, l, 0, n, every)
	var ce *loader.CheckpointError
	if !errors.As(err, &ce) || !errors.Is(err, loader.ErrNeedRecover) || ce.Stage != "precommit" ||
		!strings.Contains(err.Error(), "table db.m1") {
		t.Fatalf("drive = %v, want a precommit CheckpointError naming table db.m1", err)
	}
	e.checkNoRunningTxn()
	for _, tbl := range []string{"m0", "m2"} {
		lbl := fmt.Sprintf("%s:%s-%s:0:1", e.job, testDB, tbl)
		if s := e.srv.LabelState(testDB, lbl); s != doris.TxnAborted {
			t.Errorf("label %s is %s, want ABORTED", lbl, s)
		}
	}
	p, err := l.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := driveMulti(ctx, l, next(t, p), n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkMultiExactlyOnce(n)
}

// A table configured up front (Config.Tables) and one added with AddTable
// take their own Stream Load settings; a table configured twice, or one
// whose settings are refused, is an error naming it, and a bad table name
// refuses the row without ending the checkpoint.
func TestMultiTableTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMultiEnv(t)
	var seen []string
	obs := &requestObserver{Doris: e.client, seen: func(req doris.LoadRequest) {
		seen = append(seen, req.Table+":"+req.Format)
	}}
	e.doris = obs
	l := e.open(func(c *loader.Config) {
		c.Tables = []loader.Target{{Table: "m1", Format: "csv", Properties: map[string]string{"column_separator": ","}}}
		c.TargetFor = func(db, table string) loader.Target {
			if table == "m4" {
				return loader.Target{DB: "ignored", Format: "csv"}
			}
			return loader.Target{}
		}
	})
	defer l.Close(ctx)
	if err := l.AddTable(loader.Target{Table: "m1"}); err == nil || !strings.Contains(err.Error(), "db.m1 is configured twice") {
		t.Fatalf("AddTable of a configured table = %v", err)
	}
	if err := l.AddTable(loader.Target{Table: "m3", Properties: map[string]string{"label": "x"}}); err == nil ||
		!strings.Contains(err.Error(), "db.m3") {
		t.Fatalf("AddTable with a reserved property = %v", err)
	}
	recoverTo(t, ctx, l, 0)
	if err := l.WriteTo(ctx, "m1", []byte("1,a")); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteTo(ctx, "db.m0", row(0)); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteTo(ctx, "m4", []byte("4\td")); err != nil { // TargetFor: csv (tab-separated)
		t.Fatal(err)
	}
	if err := l.WriteTo(ctx, "db.", row(9)); err == nil || errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("WriteTo a table without name = %v, want a refusal that keeps the checkpoint", err)
	}
	if err := l.Checkpoint(ctx, pos(3)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(seen, "m1:csv") || !slices.Contains(seen, "m0:json") || !slices.Contains(seen, "m4:csv") {
		t.Fatalf("loads %v: want m1 and m4 as csv, m0 as json", seen)
	}
	if rows, err := e.srv.Rows(testDB, "m4"); err != nil || len(rows) != 1 || rows[0][0].(int64) != 4 {
		t.Fatalf("m4 rows %v, %v: want the csv row", rows, err)
	}
	if got := l.Tables(); !slices.Equal(got, []string{"db.events", "db.m0", "db.m1", "db.m4"}) {
		t.Fatalf("Tables = %v", got)
	}
}

// requestObserver reports every Stream Load request.
type requestObserver struct {
	loader.Doris
	seen func(doris.LoadRequest)
}

func (o *requestObserver) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	if req.TwoPhaseCommit {
		o.seen(req)
	}
	return o.Doris.StreamLoad(ctx, req, body)
}

// At-least-once, a checkpoint of several tables runs one non-2PC load per
// table; every table ends with each of its records at least once.
func TestMultiTableAtLeastOnce(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	alo := func(c *loader.Config) { c.Guarantee = loader.AtLeastOnce }
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterPrecommit, 4), n, every, alo)
	l := e.open(alo)
	p, err := l.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := driveMulti(ctx, l, next(t, p), n, every); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for k := range multiTables {
		rows, err := e.srv.Rows(testDB, fmt.Sprintf("m%d", k))
		if err != nil {
			t.Fatal(err)
		}
		have := map[int64]bool{}
		for _, r := range rows {
			have[r[0].(int64)] = true
		}
		for i := range n {
			if multiTable(i) == fmt.Sprintf("m%d", k) && !have[int64(i)] {
				t.Errorf("table m%d lacks record %d", k, i)
			}
		}
	}
}

// A decided checkpoint of three tables whose labels Doris no longer knows
// (aborted, then expired) is resolved per table: Recover stops naming one
// unresolved label; resolving without naming a table is refused while
// several are open; each table's txn is resolved on its own, and once all
// are, Recover heals them and every table ends exactly right.
func TestMultiTableResolvePerTable(t *testing.T) {
	t.Parallel()
	const n, every = 12, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	e.crashRunMulti(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every)
	if e.srv.TimeoutPrecommitted() != 3 || e.srv.ExpireLabels(testDB) == 0 {
		t.Fatal("setup: no precommitted txns to time out and expire")
	}
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	tables := txnTablesOf(st.Decided)
	store := func() checkpoint.Store {
		fs, err := checkpoint.OpenFile(e.dir, e.owner())
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	recoverUnresolved := func() *loader.UnresolvedError {
		t.Helper()
		l := e.open()
		defer l.Close(ctx)
		_, err := l.Recover(ctx)
		var ue *loader.UnresolvedError
		if !errors.As(err, &ue) {
			t.Fatalf("Recover = %v, want *UnresolvedError", err)
		}
		return ue
	}
	if ue := recoverUnresolved(); !strings.Contains(ue.Label, "-m0:") {
		t.Fatalf("unresolved label %s, want the first table's", ue.Label)
	}
	s := store()
	_, err = loader.ResolveAssume(ctx, s, 2, checkpoint.ResolvedAborted, loader.ResolveBy("test"))
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "uncommitted txns of 3 tables") {
		t.Fatalf("ResolveAssume without a table = %v, want a refusal listing the tables", err)
	}
	for i, table := range tables {
		s := store()
		r, err := loader.ResolveAssume(ctx, s, 2, checkpoint.ResolvedAborted, loader.ResolveBy("test"),
			loader.ResolveTable(table), loader.ResolveCheck(e.client, testDB), loader.ResolveLedger(e.dir))
		s.Close()
		if err != nil || r.Table != table {
			t.Fatalf("ResolveAssume table %s = %+v, %v", table, r, err)
		}
		if i < len(tables)-1 {
			if ue := recoverUnresolved(); !strings.Contains(ue.Label, tables[i+1][len(testDB)+1:]) {
				t.Fatalf("unresolved label %s, want the one of %s", ue.Label, tables[i+1])
			}
		}
	}
	e.runToEndMulti(ctx, n, every)
	e.checkMultiExactlyOnce(n)
	if got := entriesOf(t, e.dir, 2, ledger.EventResolved); len(got) != 3 {
		t.Fatalf("resolved entries %+v, want one per table", got)
	}
}

func txnTablesOf(d *checkpoint.Decision) []string {
	var out []string
	for _, tx := range d.Txns {
		out = append(out, tx.Table)
	}
	return out
}

// docs/design.md §2 invariants 1–3 observed at each Doris call and store
// save through a run of five tables: every table's Stream Load begins only
// with a label the store announces (a table first seen mid-checkpoint is
// announced by its own save first), every commit is of a decided txn, and
// no checkpoint is decided before every txn of the previous one is VISIBLE.
func TestMultiTableInvariantsObserved(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	ctx := context.Background()
	e := newMultiEnv(t)
	w := &invariantWatch{Doris: e.client, t: t, dir: e.dir, txnLabel: map[int64]string{}}
	e.doris = w
	var announced []string
	e.runToEndMulti(ctx, n, every, func(c *loader.Config) {
		c.Store = &orderedStore{Store: c.Store, e: e}
		c.Knobs = &loader.TestingKnobs{AfterAnnounce: func(_ uint64, lbl string) { announced = append(announced, lbl) }}
	})
	e.checkMultiExactlyOnce(n)
	w.mu.Lock()
	defer w.mu.Unlock()
	if want := 3 * n / every; w.begins != want || w.commits != want {
		t.Errorf("%d begins and %d commits, want %d of each (three tables per checkpoint)", w.begins, w.commits, want)
	}
	// Each checkpoint's table not touched by the previous one was announced
	// on its own (the knob runs after that durable save).
	for k := 1; k < n/every; k++ {
		prev := touched((k-1)*every, k*every)
		for _, name := range touched(k*every, (k+1)*every) {
			if slices.Contains(prev, name) {
				continue
			}
			db, tbl, _ := checkpoint.SplitTable(name)
			lbl := fmt.Sprintf("%s:%s-%s:0:%d", e.job, db, tbl, k+1)
			if !slices.Contains(announced, lbl) {
				t.Errorf("label %s of a table first seen in checkpoint %d was never announced", lbl, k+1)
			}
		}
	}
}
