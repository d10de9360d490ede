package table

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

func ordersTable(t *testing.T) *Table {
	return newTable(t, schema.UniqueKeys, []string{"order_id"},
		map[string]string{"function_column.sequence_col": "op_version"},
		col("order_id", "BIGINT NOT NULL"), col("status", "VARCHAR(16)"), col("op_version", "BIGINT"))
}

var jsonH = []string{"format", "json"}

// The seed scenario (docs/doris-facts.md §7 sequence column, merge-on-write):
// create(v1), pay(v2) committed; a late cancel with v1 in a later batch
// must not overwrite pay.
func TestUniqueSequenceLateEvent_Section7(t *testing.T) {
	t.Parallel()
	tb := ordersTable(t)
	commit(t, tb, hdr(jsonH...), `{"order_id":1,"status":"created","op_version":1}`+"\n"+
		`{"order_id":1,"status":"paid","op_version":2}`)
	v := tb.Version()
	commit(t, tb, hdr(jsonH...), `{"order_id":1,"status":"cancelled","op_version":1}`)
	if got := tb.Rows(); !reflect.DeepEqual(got, [][]any{{int64(1), "paid", int64(2)}}) {
		t.Fatalf("late lower-sequence event overwrote: %v", got)
	}
	if tb.Version() != v {
		t.Fatalf("version moved on a no-op batch: %d → %d", v, tb.Version())
	}
	// Equal sequence across batches: the later-committed load wins.
	commit(t, tb, hdr(jsonH...), `{"order_id":1,"status":"refunded","op_version":2}`)
	if got := tb.Rows(); got[0][1] != "refunded" || tb.Version() == v {
		t.Fatalf("equal sequence: %v (version %d)", got, tb.Version())
	}
}

func TestUniqueSequenceWithinBatch_Section7(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, want string
	}{
		{"lower later row ignored", "1,b,5\n1,c,3\n", "b"},
		{"equal later row wins", "1,b,5\n1,c,5\n", "c"},
		{"higher later row wins", "1,b,5\n1,c,6\n", "c"},
		{"null sequence loses", "1,b,5\n1,c,\\N\n", "b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tb := ordersTable(t)
			commit(t, tb, hdr("column_separator", ","), c.body)
			if got := tb.Rows(); got[0][1] != c.want {
				t.Fatalf("rows %v, want status %s", got, c.want)
			}
		})
	}
}

// Without a sequence column the later row wins, in a batch and across
// batches (docs/doris-facts.md §7).
func TestUniqueNoSequence_Section7(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("v", "VARCHAR(8)"))
	commit(t, tb, hdr(), "2\tx\n1\ta\n1\tb\n")
	commit(t, tb, hdr(), "2\ty\n")
	want := [][]any{{int64(1), "b"}, {int64(2), "y"}}
	if got := tb.Rows(); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

// Delete sign via hidden_columns (Flink connector style), CSV and JSON,
// with and without a sequence column (docs/doris-facts.md §7 delete sign).
func TestDeleteSign_Section7(t *testing.T) {
	t.Parallel()
	t.Run("no sequence csv", func(t *testing.T) {
		t.Parallel()
		tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("v", "VARCHAR(8)"))
		commit(t, tb, hdr(), "1\ta\n2\tb\n")
		b := commit(t, tb, hdr("hidden_columns", "__DORIS_DELETE_SIGN__"), "1\ta\t1\n3\tc\t0\n")
		counts(t, b, 2, 0, 0)
		want := [][]any{{int64(2), "b"}, {int64(3), "c"}}
		if got := tb.Rows(); !reflect.DeepEqual(got, want) {
			t.Fatalf("rows %v, want %v", got, want)
		}
		// Re-inserting a deleted key works without a sequence column.
		commit(t, tb, hdr(), "1\tz\n")
		if got := tb.Rows(); len(got) != 3 || got[0][1] != "z" {
			t.Fatalf("rows %v", got)
		}
	})
	t.Run("json key", func(t *testing.T) {
		t.Parallel()
		tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("v", "VARCHAR(8)"))
		commit(t, tb, hdr(jsonH...), `{"k":1,"v":"a"}`+"\n"+`{"k":2,"v":"b"}`)
		commit(t, tb, hdr("format", "json", "hidden_columns", "__DORIS_DELETE_SIGN__"), `{"k":1,"__DORIS_DELETE_SIGN__":1}`)
		if got := tb.Rows(); !reflect.DeepEqual(got, [][]any{{int64(2), "b"}}) {
			t.Fatalf("rows %v", got)
		}
	})
	t.Run("columns lists the sign", func(t *testing.T) {
		t.Parallel()
		tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("v", "VARCHAR(8)"))
		commit(t, tb, hdr(), "1\ta\n")
		commit(t, tb, hdr("columns", "k,v,__DORIS_DELETE_SIGN__"), "1\ta\t1\n")
		if got := tb.Rows(); len(got) != 0 {
			t.Fatalf("rows %v", got)
		}
	})
	t.Run("with sequence", func(t *testing.T) {
		t.Parallel()
		tb := ordersTable(t)
		h := hdr("column_separator", ",", "hidden_columns", "__DORIS_DELETE_SIGN__")
		commit(t, tb, h, "1,paid,5,0\n2,paid,5,0\n")
		// a lower-sequence delete does not remove a higher-sequence row
		commit(t, tb, h, "1,x,4,1\n")
		if got := tb.Rows(); len(got) != 2 {
			t.Fatalf("lower-sequence delete removed the row: %v", got)
		}
		// an equal/higher-sequence delete does
		commit(t, tb, h, "1,x,5,1\n")
		if got := tb.Rows(); len(got) != 1 || got[0][0] != int64(2) {
			t.Fatalf("rows %v", got)
		}
		// tombstone: a later lower-sequence upsert cannot resurrect the key
		commit(t, tb, h, "1,created,3,0\n")
		if got := tb.Rows(); len(got) != 1 {
			t.Fatalf("lower-sequence upsert resurrected a deleted key: %v", got)
		}
		commit(t, tb, h, "1,reopened,6,0\n")
		if got := tb.Rows(); len(got) != 2 || got[0][1] != "reopened" {
			t.Fatalf("rows %v", got)
		}
	})
}

// merge_type DELETE / MERGE (docs/doris-facts.md §7 delete sign).
func TestMergeType_Section7(t *testing.T) {
	t.Parallel()
	newT := func() *Table {
		tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("v", "VARCHAR(8)"))
		commit(t, tb, hdr(), "1\ta\n2\tb\n3\tc\n")
		return tb
	}
	tb := newT()
	commit(t, tb, hdr("merge_type", "DELETE"), "1\tignored\n3\tx\n")
	if got := tb.Rows(); !reflect.DeepEqual(got, [][]any{{int64(2), "b"}}) {
		t.Fatalf("DELETE: %v", got)
	}
	tb = newT()
	commit(t, tb, hdr("merge_type", "MERGE", "delete", "op = 'd'", "columns", "k,v,op"), "1\ta\td\n2\tbb\tu\n4\tn\tu\n")
	want := [][]any{{int64(2), "bb"}, {int64(3), "c"}, {int64(4), "n"}}
	if got := tb.Rows(); !reflect.DeepEqual(got, want) {
		t.Fatalf("MERGE: %v, want %v", got, want)
	}
	dup := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"))
	for _, mt := range []string{"DELETE", "MERGE"} {
		h := hdr("merge_type", mt)
		if mt == "MERGE" {
			h.Set("delete", "k=1")
		}
		_, err := tryLoad(dup, h, "1\n")
		if err == nil || err.Error() != "load by MERGE or DELETE is only supported in unique tables." {
			t.Fatalf("%s on duplicate: %v", mt, err)
		}
	}
}

// function_column.sequence_type tables take the hidden sequence from the
// header function_column.sequence_col (docs/doris-facts.md §1.4, §7).
func TestSequenceType_Section7(t *testing.T) {
	t.Parallel()
	mk := func() *Table {
		return newTable(t, schema.UniqueKeys, []string{"k"}, map[string]string{"function_column.sequence_type": "DATETIME"},
			col("k", "INT"), col("v", "VARCHAR(8)"), col("ts", "DATETIME"))
	}
	tb := mk()
	h := hdr("column_separator", ",", "function_column.sequence_col", "ts")
	commit(t, tb, h, "1,new,2024-01-02 00:00:00\n")
	commit(t, tb, h, "1,old,2024-01-01 00:00:00\n")
	if got := tb.Rows(); got[0][1] != "new" {
		t.Fatalf("rows %v", got)
	}
	// a source-only column may feed the sequence
	tb = mk()
	h2 := hdr("column_separator", ",", "columns", "k,v,ts,src_seq", "function_column.sequence_col", "src_seq")
	commit(t, tb, h2, "1,b,2024-01-01 00:00:00,2030-01-01\n1,a,2024-01-01 00:00:00,2029-01-01\n")
	if got := tb.Rows(); got[0][1] != "b" {
		t.Fatalf("rows %v", got)
	}
	_, err := tryLoad(mk(), hdr(), "")
	if err == nil || err.Error() != "Table t has sequence column, need to specify the sequence column" {
		t.Fatalf("missing header: %v", err)
	}
	plain := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"))
	_, err = tryLoad(plain, hdr("function_column.sequence_col", "k"), "")
	if err == nil || err.Error() != "There is no sequence column in the table t" {
		t.Fatalf("header on plain table: %v", err)
	}
	// a sequence_col-mapped table accepts the header too
	if _, err := tryLoad(ordersTable(t), hdr("function_column.sequence_col", "op_version"), ""); err != nil {
		t.Fatalf("mapped sequence with header: %v", err)
	}
}

// AGGREGATE KEY value columns (docs/doris-facts.md §7).
func TestAggregate_Section7(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.AggregateKeys, []string{"k"}, nil,
		col("k", "INT"), col("s", "BIGINT SUM"), col("d", "DECIMAL(10,2) SUM"), col("mx", "INT MAX"),
		col("mn", "DATE MIN"), col("r", "VARCHAR(8) REPLACE"), col("rn", "VARCHAR(8) REPLACE_IF_NOT_NULL"))
	h := hdr("column_separator", ",")
	commit(t, tb, h, "1,1,1.10,5,2024-05-01,a,x\n1,\\N,2.20,3,2024-04-01,b,\\N\n")
	commit(t, tb, h, "1,10,\\N,9,2024-06-01,\\N,\\N\n2,7,0.01,\\N,\\N,z,z\n")
	want := [][]any{
		{int64(1), int64(11), "3.30", int64(9), "2024-04-01", nil, "x"},
		{int64(2), int64(7), "0.01", nil, nil, "z", "z"},
	}
	if got := tb.Rows(); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v\nwant %v", got, want)
	}
}

func TestDuplicateSortedAndVersion_Section7(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"), col("v", "DOUBLE"))
	if tb.Version() != 0 || len(tb.Rows()) != 0 {
		t.Fatal("new table not empty")
	}
	commit(t, tb, hdr(), "2\t1.5\n1\t9\n2\t0.5\n")
	commit(t, tb, hdr(), "1\t9\n")
	want := [][]any{{int64(1), 9.0}, {int64(1), 9.0}, {int64(2), 0.5}, {int64(2), 1.5}}
	if got := tb.Rows(); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v", got)
	}
	if tb.Version() != 2 {
		t.Fatalf("version %d, want 2", tb.Version())
	}
	b := load(t, tb, hdr(), "")
	tb.Apply(b)
	if tb.Version() != 2 {
		t.Fatal("empty batch changed the version")
	}
	// Prepare alone never changes visible rows (visibility only at commit).
	load(t, tb, hdr(), "3\t3\n")
	if len(tb.Rows()) != 4 {
		t.Fatal("prepared rows visible before Apply")
	}
}

// partial_columns (docs/doris-facts.md §1.4): only loaded columns of existing keys
// change; new keys get defaults.
func TestPartialColumns_Section1_4(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil,
		col("k", "INT NOT NULL"), col("a", "VARCHAR(8)"), col("b", "INT DEFAULT=5"))
	commit(t, tb, hdr(), "1\tx\t1\n")
	commit(t, tb, hdr("partial_columns", "true", "columns", "k,b"), "1\t9\n2\t8\n")
	want := [][]any{{int64(1), "x", int64(9)}, {int64(2), nil, int64(8)}}
	if got := tb.Rows(); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	_, err := tryLoad(tb, hdr("partial_columns", "true", "columns", "a"), "x\n")
	if err == nil || !strings.Contains(err.Error(), "missing: k") {
		t.Fatalf("partial without key: %v", err)
	}
	dup := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"))
	if _, err := tryLoad(dup, hdr("partial_columns", "true"), ""); err == nil {
		t.Fatal("partial update on duplicate table accepted")
	}
	// A NOT NULL column without default cannot be filled for new keys.
	nn := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("a", "INT NOT NULL"), col("b", "INT"))
	commit(t, nn, hdr(), "1\t1\t1\n")
	commit(t, nn, hdr("partial_columns", "true", "columns", "k,b"), "1\t2\n3\t3\n")
	if got := nn.Rows(); !reflect.DeepEqual(got, [][]any{{int64(1), int64(1), int64(2)}}) {
		t.Fatalf("rows %v", got)
	}
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	bad := []*schema.Table{
		nil,
		{Name: "t"},
		{Name: "t", Keys: schema.UniqueKeys, Columns: []schema.Column{col("k", "INT")}},
		{Name: "t", Columns: []schema.Column{col("k", "HLL")}},
		{Name: "t", Columns: []schema.Column{col("k", "WHATEVER")}},
		{Name: "t", Columns: []schema.Column{col("k", "INT DEFAULT=abc")}},
		{Name: "t", Keys: schema.UniqueKeys, KeyColumns: []string{"k"}, Columns: []schema.Column{col("k", "INT")},
			Properties: map[string]string{"function_column.sequence_col": "nope"}},
	}
	for i, s := range bad {
		if _, err := New(s); err == nil {
			t.Fatalf("case %d accepted", i)
		}
	}
}

// A Table is safe for concurrent use (run under -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.UniqueKeys, []string{"k"}, nil, col("k", "INT"), col("v", "INT"))
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 20 {
				spec, _ := ParseLoadSpec(hdr())
				b, err := tb.Prepare(spec, strings.NewReader(fmt.Sprintf("%d\t%d\n", g*100+i, i)))
				if err != nil {
					t.Error(err)
					return
				}
				tb.Apply(b)
				_ = tb.Rows()
				_ = tb.Version()
			}
		}()
	}
	for range 4 {
		<-done
	}
	if n := len(tb.Rows()); n != 80 || tb.Version() != 80 {
		t.Fatalf("%d rows, version %d", n, tb.Version())
	}
}

// Only mapping expressions in `columns`: the schema is the source
// (FE Load.initColumns specifyFileFieldNames).
func TestColumnsOnlyMappings(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"), col("v", "INT"))
	commit(t, tb, hdr("columns", "v=v+100"), "1\t2\n")
	if got := tb.Rows(); !reflect.DeepEqual(got, [][]any{{int64(1), int64(102)}}) {
		t.Fatalf("rows %v", got)
	}
}
