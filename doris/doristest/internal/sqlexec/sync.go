package sqlexec

import (
	"context"
	"fmt"
	"strings"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// tableKey names a Doris table.
type tableKey struct{ DB, Name string }

// tableDef is the engine's virtual table for one Doris table: which catalog
// table (ID) and which shape (signature) it was declared with.
type tableDef struct {
	db, name  string
	id        int64
	signature string
	columns   []column
	width     int // columns in the Doris row, hidden ones included
	snap      func() (Rows, error)
}

// column is one visible column: its index in the Doris row and its SQLite
// declared type.
type column struct {
	name  string
	index int
	decl  string
}

// isHidden reports whether a column is one Doris hides from SELECT *
// (__DORIS_DELETE_SIGN__ and friends); the engine does not declare them.
func isHidden(name string) bool { return strings.HasPrefix(strings.ToUpper(name), "__DORIS_") }

// signature identifies a schema's shape: the virtual table is declared again
// when it changes (ALTER TABLE).
func signature(t *schema.Table) string {
	var b strings.Builder
	for _, c := range t.Columns {
		b.WriteString(c.Name)
		b.WriteByte(0)
		b.WriteString(c.Type)
		b.WriteByte(0)
	}
	return b.String()
}

func columnsOf(t *schema.Table) []column {
	cols := make([]column, 0, len(t.Columns))
	for i, c := range t.Columns {
		if isHidden(c.Name) {
			continue
		}
		cols = append(cols, column{name: c.Name, index: i, decl: sqliteType(c.Type)})
	}
	return cols
}

// sync declares a virtual table for every table in tables and drops those
// of tables no longer listed, or listed under another ID or shape (a table
// dropped and created again, or altered). No row is read here. Callers hold
// e.mu.
func (e *Engine) sync(ctx context.Context, currentDB string, tables []Table) error {
	want := make(map[tableKey]*Table, len(tables))
	dbs := map[string]bool{}
	for i := range tables {
		t := &tables[i]
		k := tableKey{t.DB, t.Name}
		switch {
		case t.Schema == nil || t.Snapshot == nil:
			return fmt.Errorf("table %s.%s: Schema and Snapshot are required", t.DB, t.Name)
		case want[k] != nil:
			return fmt.Errorf("table %s.%s passed twice", t.DB, t.Name)
		}
		want[k] = t
		dbs[t.DB] = true
	}
	var drops []tableKey
	var creates []*tableDef
	for k, d := range e.tables {
		if t := want[k]; t == nil || t.ID != d.id || signature(t.Schema) != d.signature {
			drops = append(drops, k)
		}
	}
	for k, t := range want {
		if d, ok := e.tables[k]; ok && d.id == t.ID && d.signature == signature(t.Schema) {
			d.snap = t.Snapshot
			continue
		}
		cols := columnsOf(t.Schema)
		if len(cols) == 0 {
			return fmt.Errorf("table %s.%s has no visible columns", t.DB, t.Name)
		}
		creates = append(creates, &tableDef{db: t.DB, name: t.Name, id: t.ID, signature: signature(t.Schema),
			columns: cols, width: len(t.Schema.Columns), snap: t.Snapshot})
	}
	if len(drops)+len(creates) > 0 {
		e.gen++
		if err := e.dropViews(ctx); err != nil {
			return err
		}
	}
	for _, k := range drops {
		if _, err := e.conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+qualified(k)); err != nil {
			return fmt.Errorf("drop table %s.%s: %w", k.DB, k.Name, err)
		}
		delete(e.tables, k)
	}
	for db := range dbs {
		if e.attached[db] {
			continue
		}
		if _, err := e.conn.ExecContext(ctx, "ATTACH DATABASE ':memory:' AS "+quoteIdent(db)); err != nil {
			return fmt.Errorf("attach database %s (SQLite attaches at most 10 databases; the engine attaches one per Doris database with tables): %w", db, err)
		}
		e.attached[db] = true
	}
	for _, d := range creates {
		k := tableKey{d.db, d.name}
		e.creating = d
		_, err := e.conn.ExecContext(ctx, "CREATE VIRTUAL TABLE "+qualified(k)+" USING "+moduleName+"("+quoteString(e.token)+")")
		e.creating = nil
		if err != nil {
			return fmt.Errorf("declare table %s.%s: %w", d.db, d.name, err)
		}
		e.tables[k] = d
	}
	for db := range e.attached {
		if dbs[db] {
			continue
		}
		if _, err := e.conn.ExecContext(ctx, "DETACH DATABASE "+quoteIdent(db)); err != nil {
			return fmt.Errorf("detach database %s: %w", db, err)
		}
		delete(e.attached, db)
	}
	return e.ensureViews(ctx, currentDB)
}

// snapshot returns the query's snapshot of d, taking it on first use.
// It runs inside Query (SQLite calls cursors on the querying goroutine).
func (e *Engine) snapshot(d *tableDef) (Rows, error) {
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	if r, ok := e.snaps[d.id]; ok {
		return r, nil
	}
	r, err := d.snap()
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("table %s.%s: no rows reader", d.db, d.name)
	}
	e.snaps[d.id] = r
	return r, nil
}

func qualified(k tableKey) string { return quoteIdent(k.DB) + "." + quoteIdent(k.Name) }
