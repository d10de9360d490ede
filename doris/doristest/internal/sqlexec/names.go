package sqlexec

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Name resolution.
//
// Each Doris database that has tables is an ATTACHed in-memory SQLite
// database of the same name, so `db`.`table` resolves as written. SQLite
// resolves an unqualified name by searching temp, then main, then the
// attached databases in attach order; left alone, `orders` would find the
// first attached database that has an orders table, whatever the current
// database. So the engine fills temp (searched first) with one view per
// table name, rebuilt whenever the current database or the set of tables
// changes:
//
//   - a table of currentDB: CREATE TEMP VIEW t AS SELECT * FROM cur.t, so the
//     name means currentDB's table even when other databases have one too;
//   - a name only other databases have: a view with those tables' columns
//     whose rows call doris_sqlexec_fail, so the query fails with Doris's
//     "does not exist" (or "No database selected") message instead of
//     silently reading another database.
//
// main stays empty. A name no database has is SQLite's "no such table".

// quoteIdent quotes an SQLite identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteString quotes an SQLite string literal.
func quoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// dropViews removes the temp views. Callers hold e.mu.
func (e *Engine) dropViews(ctx context.Context) error {
	for _, v := range e.views {
		if _, err := e.conn.ExecContext(ctx, "DROP VIEW IF EXISTS temp."+quoteIdent(v)); err != nil {
			e.viewsValid = false
			return fmt.Errorf("drop view %s: %w", v, err)
		}
	}
	e.views = nil
	e.viewsValid = false
	return nil
}

// ensureViews makes temp's views describe currentDB. Callers hold e.mu.
func (e *Engine) ensureViews(ctx context.Context, currentDB string) error {
	if e.viewsValid && e.viewsDB == currentDB && e.viewsGen == e.gen {
		return nil
	}
	if err := e.dropViews(ctx); err != nil {
		return err
	}
	type other struct {
		name string
		cols []string
		seen map[string]bool
	}
	mine := map[string]bool{}
	var stmts []string
	var names []string
	for k := range e.tables {
		if k.DB != currentDB {
			continue
		}
		mine[strings.ToLower(k.Name)] = true
		names = append(names, k.Name)
		stmts = append(stmts, fmt.Sprintf("CREATE TEMP VIEW %s AS SELECT * FROM %s.%s",
			quoteIdent(k.Name), quoteIdent(k.DB), quoteIdent(k.Name)))
	}
	others := map[string]*other{}
	for k, c := range e.tables {
		lk := strings.ToLower(k.Name)
		if k.DB == currentDB || mine[lk] {
			continue
		}
		o := others[lk]
		if o == nil {
			o = &other{name: k.Name, seen: map[string]bool{}}
			others[lk] = o
		}
		for _, col := range c.columns {
			if lc := strings.ToLower(col.name); !o.seen[lc] {
				o.seen[lc] = true
				o.cols = append(o.cols, col.name)
			}
		}
	}
	for _, o := range others {
		msg := "No database selected"
		if currentDB != "" {
			msg = fmt.Sprintf("Table [%s] does not exist in database [%s].", o.name, currentDB)
		}
		sel := make([]string, len(o.cols))
		for i, c := range o.cols {
			sel[i] = "NULL AS " + quoteIdent(c)
		}
		names = append(names, o.name)
		stmts = append(stmts, fmt.Sprintf("CREATE TEMP VIEW %s AS SELECT %s WHERE %s(%s)",
			quoteIdent(o.name), strings.Join(sel, ", "), failFunction, quoteString(msg)))
	}
	sort.Strings(stmts) // deterministic order, for reproducible failures
	for _, s := range stmts {
		if _, err := e.conn.ExecContext(ctx, s); err != nil {
			e.views = names
			return fmt.Errorf("create view: %w", err)
		}
	}
	e.views, e.viewsDB, e.viewsGen, e.viewsValid = names, currentDB, e.gen, true
	return nil
}
