package sqlexec

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// tableKey names a Doris table.
type tableKey struct{ DB, Name string }

// copiedTable is what the engine remembers about its SQLite copy of a table.
type copiedTable struct {
	version   uint64
	signature string
	columns   []column
}

// column is one copied column: its index in the Doris row and its SQLite
// declared type.
type column struct {
	name  string
	index int
	decl  string
}

// isHidden reports whether a column is one Doris hides from SELECT *
// (__DORIS_DELETE_SIGN__ and friends); the engine does not copy them.
func isHidden(name string) bool { return strings.HasPrefix(strings.ToUpper(name), "__DORIS_") }

// signature identifies a schema's shape: a copy is rebuilt when it changes.
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

// refresh is one table to (re)copy.
type refresh struct {
	t       *Table
	key     tableKey
	rebuild bool // schema new or changed: drop and create; else delete rows
	copied  copiedTable
}

// sync brings the SQLite copies in line with tables. Callers hold e.mu.
func (e *Engine) sync(ctx context.Context, currentDB string, tables []Table) error {
	want := make(map[tableKey]*Table, len(tables))
	dbs := map[string]bool{}
	for i := range tables {
		t := &tables[i]
		k := tableKey{t.DB, t.Name}
		switch {
		case t.Schema == nil || t.Rows == nil:
			return fmt.Errorf("table %s.%s: Schema and Rows are required", t.DB, t.Name)
		case want[k] != nil:
			return fmt.Errorf("table %s.%s passed twice", t.DB, t.Name)
		}
		want[k] = t
		dbs[t.DB] = true
	}

	var drops []tableKey
	var refreshes []refresh
	shapeChanged := false
	for k := range e.tables {
		if want[k] == nil {
			drops = append(drops, k)
			shapeChanged = true
		}
	}
	for k, t := range want {
		c, ok := e.tables[k]
		sig := signature(t.Schema)
		switch {
		case !ok || c.signature != sig:
			cols := columnsOf(t.Schema)
			if len(cols) == 0 {
				return fmt.Errorf("table %s.%s has no visible columns", t.DB, t.Name)
			}
			refreshes = append(refreshes, refresh{t: t, key: k, rebuild: true,
				copied: copiedTable{version: t.Version, signature: sig, columns: cols}})
			shapeChanged = true
		case c.version != t.Version:
			refreshes = append(refreshes, refresh{t: t, key: k,
				copied: copiedTable{version: t.Version, signature: sig, columns: c.columns}})
		}
	}
	if shapeChanged {
		e.gen++
		if err := e.dropViews(ctx); err != nil {
			return err
		}
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
	if len(drops)+len(refreshes) > 0 {
		if err := e.copyTables(ctx, drops, refreshes); err != nil {
			return err
		}
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

// copyTables drops and refreshes tables in one transaction and records the
// new copies only once it has committed.
func (e *Engine) copyTables(ctx context.Context, drops []tableKey, refreshes []refresh) (err error) {
	tx, err := e.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin copy: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	for _, k := range drops {
		if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+qualified(k)); err != nil {
			return fmt.Errorf("drop table %s.%s: %w", k.DB, k.Name, err)
		}
	}
	for _, r := range refreshes {
		if err := copyTable(ctx, tx, r); err != nil {
			return fmt.Errorf("copy table %s.%s: %w", r.key.DB, r.key.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit copy: %w", err)
	}
	for _, k := range drops {
		delete(e.tables, k)
	}
	for _, r := range refreshes {
		e.tables[r.key] = r.copied
	}
	return nil
}

func qualified(k tableKey) string { return quoteIdent(k.DB) + "." + quoteIdent(k.Name) }

// copyTable replaces one table's SQLite copy with r.t.Rows().
func copyTable(ctx context.Context, tx *sql.Tx, r refresh) error {
	cols := r.copied.columns
	name := qualified(r.key)
	if r.rebuild {
		defs := make([]string, len(cols))
		for i, c := range cols {
			defs[i] = quoteIdent(c.name) + " " + c.decl
		}
		if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+name); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE "+name+" ("+strings.Join(defs, ", ")+")"); err != nil {
			return err
		}
	} else if _, err := tx.ExecContext(ctx, "DELETE FROM "+name); err != nil {
		return err
	}
	rows := r.t.Rows()
	if len(rows) == 0 {
		return nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",")
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+name+" VALUES ("+marks+")")
	if err != nil {
		return err
	}
	defer stmt.Close()
	want := len(r.t.Schema.Columns)
	args := make([]any, len(cols))
	for n, row := range rows {
		if len(row) != want {
			return fmt.Errorf("row %d has %d values, the schema has %d columns", n, len(row), want)
		}
		for i, c := range cols {
			args[i] = storeValue(row[c.index], c.decl)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("row %d: %w", n, err)
		}
	}
	return nil
}
