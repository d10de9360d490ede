package sqlexec

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// newEngine starts an engine closed at the end of the test.
func newEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// fakeTable is a mutable table whose Snapshot calls are counted.
type fakeTable struct {
	db, name string
	id       int64
	schema   *schema.Table
	rows     [][]any
	reads    atomic.Int64
}

// fakeIDs hands out table IDs, as the catalog does: never reused.
var fakeIDs atomic.Int64

func newFake(db, name string, cols [][2]string, rows ...[]any) *fakeTable {
	s := &schema.Table{Database: db, Name: name}
	for _, c := range cols {
		s.Columns = append(s.Columns, schema.Column{Name: c[0], Type: c[1], Nullable: true})
	}
	return &fakeTable{db: db, name: name, id: fakeIDs.Add(1), schema: s, rows: rows}
}

func (f *fakeTable) table() Table {
	rows := f.rows
	return Table{DB: f.db, Name: f.name, ID: f.id, Schema: f.schema, Snapshot: func() (Rows, error) {
		f.reads.Add(1)
		return SliceRows(rows), nil
	}}
}

func tablesOf(fs ...*fakeTable) []Table {
	out := make([]Table, len(fs))
	for i, f := range fs {
		out[i] = f.table()
	}
	return out
}

func mustQuery(t *testing.T, e *Engine, db string, tables []Table, q string) *Result {
	t.Helper()
	res, err := e.Query(context.Background(), db, tables, q)
	if err != nil {
		t.Fatalf("Query(%q): %v", q, err)
	}
	return res
}

func wantRows(t *testing.T, res *Result, want [][]any) {
	t.Helper()
	if want == nil {
		want = [][]any{}
	}
	if !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("rows = %#v\nwant   %#v", res.Rows, want)
	}
}

func row(v ...any) []any { return v }
