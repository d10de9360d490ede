package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
)

// fakeDDL is a TableDDL over one in-memory table.
type fakeDDL struct {
	table   *schema.Table // nil: missing
	execs   []string
	execErr error // returned by the next ExecDDL (then cleared), after applying it when applied is set
	applied bool
	reads   int
}

func (f *fakeDDL) ShowCreateTable(context.Context, string, string) (*schema.Table, error) {
	f.reads++
	if f.table == nil {
		return nil, doris.ErrNotFound
	}
	t, err := schema.ParseCreateTable(f.table.CreateTableSQL())
	return t, err
}

func (f *fakeDDL) ExecDDL(_ context.Context, stmt string) error {
	f.execs = append(f.execs, stmt)
	err := f.execErr
	f.execErr = nil
	if err != nil && !f.applied {
		return err
	}
	if strings.HasPrefix(stmt, "CREATE") {
		st, perr := schema.ParseCreateTableStmt(stmt)
		if perr != nil {
			return perr
		}
		if f.table == nil {
			f.table = st.Table
		}
		return err
	}
	// ALTER … ADD COLUMN `c` type NULL[, …]: append the columns.
	for _, cl := range strings.Split(stmt[strings.Index(stmt, "ADD COLUMN"):], ", ") {
		def := strings.TrimPrefix(cl, "ADD COLUMN ")
		t, perr := schema.ParseCreateTable("CREATE TABLE x (" + def + ")")
		if perr != nil {
			return perr
		}
		f.table.Columns = append(f.table.Columns, t.Columns[0])
	}
	return err
}

var evolveFields = []cdcschema.Field{{Name: "id", Type: "int64"}, {Name: "name", Type: "string"}}

// A table that exists with another key is compared, not replaced.
func TestTableEvolverExistingTableWithAnotherKey(t *testing.T) {
	t.Parallel()
	tbl, _ := schema.ParseCreateTable("CREATE TABLE t (name VARCHAR(10), id BIGINT) DUPLICATE KEY(name) DISTRIBUTED BY HASH(name) BUCKETS 1")
	f := &fakeDDL{}
	ev := &TableEvolver{DDL: f, DB: "db", Table: "t", Create: true}
	in := Incoming{Fields: evolveFields, Keys: []string{"id"}, FromSchema: true}
	if _, need, err := ev.Needs(context.Background(), in); err != nil || !need {
		t.Fatalf("Needs on a missing table: %v %v", need, err)
	}
	f.table = tbl // created meanwhile by someone else
	_, err := ev.Apply(context.Background(), in)
	if !errors.Is(err, ErrSchemaRefused) || !strings.Contains(err.Error(), "exists with another key") || !strings.Contains(err.Error(), "DUPLICATE KEY(name)") {
		t.Fatalf("Apply: %v, want a refusal naming both keys", err)
	}
	if len(f.execs) != 0 {
		t.Fatalf("DDL sent %q, want none (the table is compared, not replaced)", f.execs)
	}
	// The same table found at start is refused the same way.
	ev2 := &TableEvolver{DDL: f, DB: "db", Table: "t", Create: true}
	if _, _, err := ev2.Needs(context.Background(), in); err == nil || !strings.Contains(err.Error(), "UNIQUE KEY(id)") {
		t.Fatalf("Needs on an existing table with another key: %v", err)
	}
}

// An ALTER that fails because the column is there already (a crash after
// the ALTER, a stale cache) is success after re-reading the table.
func TestTableEvolverAlterDoneAlready(t *testing.T) {
	t.Parallel()
	tbl, _ := schema.ParseCreateTable("CREATE TABLE t (id BIGINT NOT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	f := &fakeDDL{table: tbl}
	var evidence []string
	ev := &TableEvolver{DDL: f, DB: "db", Table: "t", AddColumns: true, Evidence: func(kind, ddl string) { evidence = append(evidence, kind) }}
	in := Incoming{Fields: evolveFields, FromSchema: true}
	if _, need, err := ev.Needs(context.Background(), in); err != nil || !need {
		t.Fatalf("Needs: %v %v", need, err)
	}
	f.execErr, f.applied = errors.New("Can not add column which already exists in base table: name"), true
	cols, err := ev.Apply(context.Background(), in)
	if err != nil || len(cols) != 2 || cols[1].Name != "name" {
		t.Fatalf("Apply: %v %v", cols, err)
	}
	if len(evidence) != 0 {
		t.Fatalf("evidence %v: the change was not made by this call", evidence)
	}
	// A failure that leaves the column missing is an error naming the table.
	tbl2, _ := schema.ParseCreateTable("CREATE TABLE t (id BIGINT NOT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	f2 := &fakeDDL{table: tbl2}
	ev2 := &TableEvolver{DDL: f2, DB: "db", Table: "t", AddColumns: true}
	f2.execErr = errors.New("connection refused")
	if _, err := ev2.Apply(context.Background(), in); err == nil || !strings.Contains(err.Error(), "db.t") {
		t.Fatalf("Apply with Doris down: %v", err)
	}
}

// Without add_columns, fields the table lacks need nothing (they stay
// unknown fields, as without an evolver); a missing table without
// doris.create_table is ErrNotFound.
func TestTableEvolverModes(t *testing.T) {
	t.Parallel()
	tbl, _ := schema.ParseCreateTable("CREATE TABLE t (id BIGINT NOT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	f := &fakeDDL{table: tbl}
	ev := &TableEvolver{DDL: f, DB: "db", Table: "t", Create: true}
	in := Incoming{Fields: evolveFields, FromSchema: true}
	if _, need, err := ev.Needs(context.Background(), in); err != nil || need {
		t.Fatalf("Needs without add_columns: %v %v", need, err)
	}
	if _, _, err := ev.Needs(context.Background(), in); err != nil || f.reads != 1 {
		t.Fatalf("second Needs read the table again (%d reads): %v", f.reads, err)
	}
	ev2 := &TableEvolver{DDL: &fakeDDL{}, DB: "db", Table: "t", AddColumns: true}
	if _, _, err := ev2.Needs(context.Background(), in); !errors.Is(err, doris.ErrNotFound) || !strings.Contains(err.Error(), "doris.create_table") {
		t.Fatalf("missing table: %v", err)
	}
	// Creating needs the record's schema and key.
	ev3 := &TableEvolver{DDL: &fakeDDL{}, DB: "db", Table: "t", Create: true}
	for _, bad := range []Incoming{{Fields: evolveFields}, {Fields: evolveFields, FromSchema: true}} {
		if _, err := ev3.Apply(context.Background(), bad); !errors.Is(err, ErrSchemaRefused) || !strings.Contains(err.Error(), "schemas.enable=true") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// An ALTER that returns before its change is visible (a heavy schema
// change job) is not success: the load must not begin before the column.
func TestTableEvolverChangeNotVisibleYet(t *testing.T) {
	t.Parallel()
	tbl, _ := schema.ParseCreateTable("CREATE TABLE t (id BIGINT NOT NULL) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	f := &heavyDDL{fakeDDL: fakeDDL{table: tbl}}
	ev := &TableEvolver{DDL: f, DB: "db", Table: "t", AddColumns: true}
	_, err := ev.Apply(context.Background(), Incoming{Fields: evolveFields, FromSchema: true})
	if err == nil || !strings.Contains(err.Error(), "not visible yet") || errors.Is(err, ErrSchemaRefused) {
		t.Fatalf("Apply: %v, want a retryable error saying the change is not visible", err)
	}
}

// heavyDDL accepts an ALTER without applying it (the job still runs).
type heavyDDL struct{ fakeDDL }

func (h *heavyDDL) ExecDDL(_ context.Context, stmt string) error {
	h.execs = append(h.execs, stmt)
	return nil
}
