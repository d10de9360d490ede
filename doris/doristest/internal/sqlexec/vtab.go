package sqlexec

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite/vtab"
)

// Virtual tables.
//
// The engine copies nothing: every Doris table is an SQLite virtual table
// (module doris_table) whose cursor reads the rows the Table's Snapshot
// returns. SQLite opens a cursor only on the tables a statement reads, so a
// query touches only the tables it names, sees every commit made before it
// started, and the engine holds no second copy of the data. Snapshot is called
// at most once per table per query (a self-join reads one snapshot).

// moduleName is the SQLite module every Doris table is created with.
const moduleName = "doris_table"

// engines maps the token in `USING doris_table(<token>)` to the engine whose
// table is being created. SQLite hands a module only its arguments, and the
// module is registered once per process on the private driver (driver.go),
// so the engines it serves must be found by name. Entries live from New to
// Close.
var engines sync.Map // string → *Engine

// vtabModule is the doris_table module.
type vtabModule struct{}

// Create implements vtab.Module. args are module, database, table, then the
// module arguments: the engine token.
func (vtabModule) Create(ctx vtab.Context, args []string) (vtab.Table, error) {
	if len(args) < 4 {
		return nil, fmt.Errorf("doris_table: missing engine token")
	}
	v, ok := engines.Load(strings.Trim(args[3], `'" `))
	if !ok {
		return nil, fmt.Errorf("doris_table: unknown engine %s", args[3])
	}
	e := v.(*Engine)
	def := e.creating
	if def == nil {
		return nil, fmt.Errorf("doris_table: no table is being created")
	}
	cols := make([]string, len(def.columns))
	for i, c := range def.columns {
		cols[i] = quoteIdent(c.name) + " " + c.decl
		if strings.HasPrefix(c.decl, "TEXT DORIS_DATE") {
			cols[i] += " COLLATE " + datetimeCollation
		}
	}
	if err := ctx.Declare("CREATE TABLE x(" + strings.Join(cols, ", ") + ")"); err != nil {
		return nil, err
	}
	return &vtabTable{e: e, def: def}, nil
}

// Connect implements vtab.Module; the engine's in-memory databases are
// never reopened, so it is Create.
func (m vtabModule) Connect(ctx vtab.Context, args []string) (vtab.Table, error) {
	return m.Create(ctx, args)
}

// vtabTable is one Doris table seen by SQLite.
type vtabTable struct {
	e   *Engine
	def *tableDef
}

// BestIndex implements vtab.Table: every plan is a full scan.
func (t *vtabTable) BestIndex(info *vtab.IndexInfo) error {
	info.EstimatedCost = 1e6
	info.EstimatedRows = 1e6
	return nil
}

// Open implements vtab.Table.
func (t *vtabTable) Open() (vtab.Cursor, error) { return &vtabCursor{t: t}, nil }

// Disconnect implements vtab.Table.
func (t *vtabTable) Disconnect() error { return nil }

// Destroy implements vtab.Table.
func (t *vtabTable) Destroy() error { return nil }

// vtabCursor scans one snapshot.
type vtabCursor struct {
	t    *vtabTable
	rows Rows
	n, i int
}

// Filter implements vtab.Cursor: it (re)starts the scan on the query's
// snapshot of the table.
func (c *vtabCursor) Filter(int, string, []vtab.Value) error {
	rows, err := c.t.e.snapshot(c.t.def)
	if err != nil {
		return err
	}
	c.rows, c.n, c.i = rows, rows.Len(), 0
	return nil
}

// Next implements vtab.Cursor.
func (c *vtabCursor) Next() error { c.i++; return nil }

// Eof implements vtab.Cursor.
func (c *vtabCursor) Eof() bool { return c.i >= c.n }

// Column implements vtab.Cursor.
func (c *vtabCursor) Column(col int) (vtab.Value, error) {
	d := c.t.def
	k := d.columns[col]
	v, ok := c.rows.Value(c.i, k.index)
	if !ok {
		return nil, fmt.Errorf("table %s.%s: row %d has no column %d (%s); the schema has %d columns", d.db, d.name, c.i, k.index, k.name, d.width)
	}
	cv := columnValue(v, k.decl)
	if text, isText := cv.(string); isText && strings.HasPrefix(k.decl, "DECIMAL") {
		// columnValue keeps the text of a DECIMAL it cannot hold exactly.
		n, _ := SignificantDigits(text)
		return nil, fmt.Errorf("%sDECIMAL value %s of %s.%s.%s has %d significant digits; the emulator's SQL engine holds DECIMAL values in float64, exact to %d (Doris computes DECIMAL exactly)", NotEmulatedPrefix, text, d.db, d.name, k.name, n, MaxExactDigits)
	}
	return cv, nil
}

// Rowid implements vtab.Cursor.
func (c *vtabCursor) Rowid() (int64, error) { return int64(c.i) + 1, nil }

// Close implements vtab.Cursor.
func (c *vtabCursor) Close() error { return nil }

// columnValue is storeValue plus the column affinity SQLite would have
// applied when storing into a column declared decl
// (https://sqlite.org/datatype3.html §3): a virtual table's values reach the
// query as returned, so DECIMAL text becomes a number here.
func columnValue(v any, decl string) any {
	v = storeValue(v, decl)
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(decl, "DECIMAL") {
		return v
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	if n, ok := SignificantDigits(s); ok && n > MaxExactDigits {
		return v // not exact in float64: Column refuses it
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return v
	}
	if i := int64(f); float64(i) == f && f < 1<<53 && f > -(1<<53) {
		return i
	}
	return f
}
