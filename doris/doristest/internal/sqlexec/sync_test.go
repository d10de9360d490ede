package sqlexec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestCurrentDatabaseAndQualifiedNames(t *testing.T) {
	t.Parallel()
	cols := [][2]string{{"id", "BIGINT"}, {"v", "VARCHAR(8)"}}
	d1 := newFake("d1", "t", cols, row(int64(1), "one"))
	d2 := newFake("d2", "t", cols, row(int64(2), "two"), row(int64(3), "three"))
	only2 := newFake("d2", "only_in_d2", [][2]string{{"x", "INT"}}, row(int64(7)))
	tables := tablesOf(d1, d2, only2)
	e := newEngine(t)

	tests := []struct {
		db, q string
		want  [][]any
	}{
		{"d1", "SELECT v FROM t", [][]any{row("one")}},
		{"d2", "SELECT v FROM t ORDER BY id", [][]any{row("two"), row("three")}},
		{"d1", "SELECT v FROM d2.t ORDER BY id", [][]any{row("two"), row("three")}},
		{"d2", "SELECT v FROM `d1`.`t`", [][]any{row("one")}},
		{"d1", "SELECT a.v, b.v FROM t a JOIN d2.t b ON b.id = a.id + 1", [][]any{row("one", "two")}},
		{"", "SELECT COUNT(*) FROM d1.t", [][]any{row(int64(1))}},
		{"d1", "SELECT x FROM d2.only_in_d2", [][]any{row(int64(7))}},
		{"d2", "SELECT x FROM only_in_d2", [][]any{row(int64(7))}},
		{"d1", "SELECT v FROM t", [][]any{row("one")}}, // back again: views follow currentDB
	}
	for _, tc := range tests {
		wantRows(t, mustQuery(t, e, tc.db, tables, tc.q), tc.want)
	}

	// An unqualified name that only another database has must not silently
	// read that database.
	for _, tc := range []struct{ db, q, msg string }{
		{"d1", "SELECT x FROM only_in_d2", "Table [only_in_d2] does not exist in database [d1]"},
		{"d1", "SELECT COUNT(*) FROM only_in_d2", "does not exist"},
		{"", "SELECT * FROM t", "No database selected"},
		{"d3", "SELECT * FROM t", "Table [t] does not exist in database [d3]"},
	} {
		_, err := e.Query(context.Background(), tc.db, tables, tc.q)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("db %q %q: err = %v, want one mentioning %q", tc.db, tc.q, err, tc.msg)
		}
	}
}

// TestReadsOnlyNamedTablesOncePerQuery: a query takes a snapshot only of the
// tables it reads, once per table even in a self-join, and sees rows
// committed since the previous query without any copy step.
func TestReadsOnlyNamedTablesOncePerQuery(t *testing.T) {
	t.Parallel()
	a := newFake("demo", "a", [][2]string{{"id", "BIGINT"}}, row(int64(1)), row(int64(2)))
	b := newFake("demo", "b", [][2]string{{"id", "BIGINT"}}, row(int64(9)))
	e := newEngine(t)
	wantRows(t, mustQuery(t, e, "demo", tablesOf(a, b), "SELECT COUNT(*) FROM a"), [][]any{row(int64(2))})
	if a.reads.Load() != 1 || b.reads.Load() != 0 {
		t.Fatalf("snapshots: a %d, b %d; want 1 and 0 (b is not named)", a.reads.Load(), b.reads.Load())
	}
	a.rows = append(a.rows, row(int64(3)))
	wantRows(t, mustQuery(t, e, "demo", tablesOf(a, b), "SELECT COUNT(*) FROM a x JOIN a y ON x.id = y.id"), [][]any{row(int64(3))})
	if a.reads.Load() != 2 {
		t.Errorf("snapshots of a after a self-join = %d, want 2 (one per query)", a.reads.Load())
	}
	// A schema change declares the table again.
	a.schema.Columns = append(a.schema.Columns, a.schema.Columns[0])
	a.schema.Columns[1].Name = "extra"
	for i := range a.rows {
		a.rows[i] = append(a.rows[i], int64(10*(i+1)))
	}
	wantRows(t, mustQuery(t, e, "demo", tablesOf(a, b), "SELECT SUM(extra) FROM a"), [][]any{row(int64(60))})
}

// TestDropAndCreateSameName is issue 9 item 5: a table dropped and created
// again under the same name (a new catalog ID) must never answer with the
// old table's rows or columns.
func TestDropAndCreateSameName(t *testing.T) {
	t.Parallel()
	old := newFake("demo", "t", [][2]string{{"id", "BIGINT"}}, row(int64(1)), row(int64(2)), row(int64(3)))
	e := newEngine(t)
	wantRows(t, mustQuery(t, e, "demo", tablesOf(old), "SELECT COUNT(*) FROM t"), [][]any{row(int64(3))})
	fresh := newFake("demo", "t", [][2]string{{"id", "BIGINT"}})
	wantRows(t, mustQuery(t, e, "demo", tablesOf(fresh), "SELECT COUNT(*) FROM t"), [][]any{row(int64(0))})
	other := newFake("demo", "t", [][2]string{{"k", "INT"}, {"v", "STRING"}}, row(int64(5), "x"))
	wantRows(t, mustQuery(t, e, "demo", tablesOf(other), "SELECT k, v FROM t"), [][]any{row(int64(5), "x")})
}

func TestDroppedTableDisappears(t *testing.T) {
	t.Parallel()
	a := newFake("d1", "a", [][2]string{{"id", "INT"}}, row(int64(1)))
	b := newFake("d2", "b", [][2]string{{"id", "INT"}}, row(int64(2)))
	e := newEngine(t)
	wantRows(t, mustQuery(t, e, "d1", tablesOf(a, b), "SELECT id FROM d2.b"), [][]any{row(int64(2))})

	for _, q := range []string{"SELECT id FROM d2.b", "SELECT id FROM b"} {
		_, err := e.Query(context.Background(), "d2", tablesOf(a), q)
		if err == nil || !strings.Contains(err.Error(), "Table [b] does not exist in database [d2].") {
			t.Errorf("%q after drop: err = %v, want Doris's unknown-table text", q, err)
		}
	}
	wantRows(t, mustQuery(t, e, "d1", tablesOf(a), "SELECT id FROM a"), [][]any{row(int64(1))})
	wantRows(t, mustQuery(t, e, "d1", tablesOf(a, b), "SELECT id FROM d2.b"), [][]any{row(int64(2))})
}

func TestHiddenColumnsAndBadRows(t *testing.T) {
	t.Parallel()
	f := newFake("demo", "u", [][2]string{{"k", "INT"}, {"__DORIS_DELETE_SIGN__", "TINYINT"}, {"v", "STRING"}},
		row(int64(1), int64(0), "a"))
	e := newEngine(t)
	res := mustQuery(t, e, "demo", tablesOf(f), "SELECT * FROM u")
	if strings.Join(res.Columns, ",") != "k,v" {
		t.Errorf("columns = %v, want k,v (hidden columns are not selectable, like Doris without show_hidden_columns)", res.Columns)
	}
	wantRows(t, res, [][]any{row(int64(1), "a")})

	bad := newFake("demo", "bad", [][2]string{{"k", "INT"}, {"v", "INT"}}, row(int64(1)))
	// A broken table does not disturb queries that do not read it.
	wantRows(t, mustQuery(t, e, "demo", tablesOf(f, bad), "SELECT k FROM u"), [][]any{row(int64(1))})
	_, err := e.Query(context.Background(), "demo", tablesOf(f, bad), "SELECT * FROM bad")
	if err == nil || !strings.Contains(err.Error(), "demo.bad") || !strings.Contains(err.Error(), "row 0 has no column 1") {
		t.Errorf("err = %v, want one naming demo.bad and the short row", err)
	}
	wantRows(t, mustQuery(t, e, "demo", tablesOf(f), "SELECT k FROM u"), [][]any{row(int64(1))})
}

func TestCanceledContextLeavesEngineUsable(t *testing.T) {
	t.Parallel()
	f := newFake("demo", "t", [][2]string{{"id", "BIGINT"}}, row(int64(1)))
	e := newEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Query(ctx, "demo", tablesOf(f), "SELECT * FROM t"); err == nil {
		t.Fatal("Query with a canceled context succeeded")
	}
	wantRows(t, mustQuery(t, e, "demo", tablesOf(f), "SELECT * FROM t"), [][]any{row(int64(1))})
}

func TestClose(t *testing.T) {
	t.Parallel()
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := e.Query(context.Background(), "", nil, "SELECT 1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Query after Close: %v, want ErrClosed", err)
	}
}

func TestConcurrentQueries(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	cols := [][2]string{{"id", "BIGINT"}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 6 {
		wg.Go(func() {
			// Each goroutine owns a table and passes only it, so queries also
			// drop and re-declare each other's tables (two share each database).
			f := newFake(fmt.Sprintf("db%d", g%4), fmt.Sprintf("t%d", g), cols)
			for i := range 10 {
				f.rows = append(f.rows, row(int64(i)))
				res, err := e.Query(context.Background(), f.db, tablesOf(f), fmt.Sprintf("SELECT COUNT(*) FROM t%d", g))
				if err != nil {
					errs <- err
					return
				}
				if got := res.Rows[0][0]; got != int64(i+1) {
					errs <- fmt.Errorf("goroutine %d step %d: count %v", g, i, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestTenThousandRows(t *testing.T) {
	t.Parallel()
	f := bigTable(10_000)
	e := newEngine(t)
	res := mustQuery(t, e, "demo", tablesOf(f),
		"SELECT COUNT(*), COUNT(DISTINCT bucket), SUM(id), MAX(amount) FROM big")
	wantRows(t, res, [][]any{row(int64(10_000), int64(100), int64(10_000*9_999/2), 99.99)})
	res = mustQuery(t, e, "demo", tablesOf(f),
		"SELECT bucket, COUNT(*) FROM big GROUP BY bucket HAVING COUNT(*) <> 100")
	wantRows(t, res, nil)
}

func bigTable(n int) *fakeTable {
	f := newFake("demo", "big", [][2]string{{"id", "BIGINT"}, {"bucket", "INT"}, {"amount", "DECIMAL(10,2)"}, {"note", "VARCHAR(32)"}})
	f.rows = make([][]any, n)
	for i := range n {
		f.rows[i] = row(int64(i), int64(i%100), fmt.Sprintf("%d.%02d", i%100, i%100), fmt.Sprintf("note %d", i))
	}
	return f
}

func BenchmarkQuery10k(b *testing.B) {
	e, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	f := bigTable(10_000)
	ctx := context.Background()
	b.Run("group-by", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.Query(ctx, "demo", tablesOf(f), "SELECT bucket, COUNT(*), SUM(amount) FROM big GROUP BY bucket"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.Query(ctx, "demo", tablesOf(f), "SELECT COUNT(*) FROM big"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A Snapshot error (the catalog's table was altered after it was listed)
// fails the query with its text and leaves the engine usable.
func TestSnapshotErrorFailsQuery(t *testing.T) {
	t.Parallel()
	f := newFake("demo", "t", [][2]string{{"id", "BIGINT"}}, row(int64(1)))
	bad := f.table()
	bad.Snapshot = func() (Rows, error) {
		return nil, errors.New("table [demo.t] was altered after the query started; run it again")
	}
	e := newEngine(t)
	_, err := e.Query(context.Background(), "demo", []Table{bad}, "SELECT COUNT(*) FROM t")
	if err == nil || !strings.Contains(err.Error(), "was altered after the query started") || strings.Contains(err.Error(), "SQL logic error") {
		t.Fatalf("err = %v, want the snapshot's error alone", err)
	}
	wantRows(t, mustQuery(t, e, "demo", tablesOf(f), "SELECT COUNT(*) FROM t"), [][]any{row(int64(1))})
}
