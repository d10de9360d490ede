// Package sqlexec answers SELECT statements over the emulator's tables with a
// real SQL engine (an in-memory SQLite), so that verification and exploration
// queries from the mysql client behave like SQL rather than like a hand-grown
// subset.
//
// Each Engine owns one private in-memory SQLite connection. Every table it is
// handed is declared there as a virtual table that reads the table's rows in
// place (vtab.go): nothing is copied, a query reads only the tables it names,
// and it sees every commit made before it began. Query makes unqualified names
// mean the current database (names.go), runs the statement read-only under a
// deadline and formats the answer the way Doris prints it (types.go). Doris
// functions SQLite lacks are listed in functions.go.
package sqlexec

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Table is one table the engine can read. Listing a table costs nothing:
// Snapshot is called only when a query reads the table, at most once per
// query.
type Table struct {
	DB   string
	Name string
	// ID is the table's catalog identity: it survives ALTER TABLE and is
	// never reused, so a table dropped and created again under the same name
	// is a new table to the engine.
	ID     int64
	Schema *schema.Table
	// Snapshot returns the visible rows as of the call, in the layout of
	// Schema; an error (e.g. the table was altered since it was listed)
	// fails the query. It is called during Query, on the querying
	// goroutine; it must not call back into the Engine.
	Snapshot func() (Rows, error)
}

// Rows is a read-only view of a table's visible rows.
type Rows interface {
	// Len is the number of rows.
	Len() int
	// Value returns column col (its index in the schema, hidden columns
	// included) of row i: nil, int64, float64 or string (DECIMAL, dates,
	// LARGEINT and text as strings). ok is false when the row has no such
	// column (a malformed row). Only the columns a query reads are asked
	// for.
	Value(i, col int) (v any, ok bool)
}

// SliceRows is Rows over a slice.
type SliceRows [][]any

// Len implements Rows.
func (r SliceRows) Len() int { return len(r) }

// Value implements Rows.
func (r SliceRows) Value(i, col int) (any, bool) {
	if col < len(r[i]) {
		return r[i][col], true
	}
	return nil, false
}

// Result is a query answer: column labels and rows whose values are nil,
// int64, float64 or string.
type Result struct {
	Columns []string
	// Types holds, per column, the Doris type of a column that is a plain
	// reference to a table column (through views and subqueries too), as
	// DorisType gives it ("DATETIME(3)", "DECIMAL(10,2)", "BIGINT"); "" for
	// an expression, whose type the caller infers.
	Types []string
	Rows  [][]any
}

// engineSeq numbers engines for their tokens.
var engineSeq atomic.Uint64

// ErrClosed is returned by Query after Close.
var ErrClosed = errors.New("sqlexec: engine closed")

// Engine runs queries. It is safe for concurrent use; queries run one at a
// time. The zero value is not usable: call New.
type Engine struct {
	mu     sync.Mutex
	closed bool
	db     *sql.DB
	conn   *sql.Conn // the one connection: in-memory state lives in it
	user   atomic.Bool

	token    string // this engine's name in engines (vtab.go)
	seq      uint64 // this engine's number, the high half of query ids
	queries  atomic.Uint64
	creating *tableDef
	tables   map[tableKey]*tableDef
	attached map[string]bool

	snapMu sync.Mutex
	snaps  map[int64]Rows // the running query's snapshots, by table ID
	gen    uint64         // bumped when the set or shape of tables changes

	views      []string // temp view names (names.go)
	viewsDB    string
	viewsGen   uint64
	viewsValid bool
}

// New starts an engine with an empty private in-memory database. Call Close
// when done.
func New() (*Engine, error) {
	drv, err := dialectDriver()
	if err != nil {
		return nil, fmt.Errorf("sqlexec: register functions: %w", err)
	}
	// ":memory:" is private to its connection (no shared cache), so every
	// Engine has its own database; one connection keeps it alive.
	db := sql.OpenDB(connector{drv: drv, dsn: ":memory:"})
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlexec: open in-memory database: %w", err)
	}
	e := &Engine{db: db, conn: conn, tables: map[tableKey]*tableDef{}, attached: map[string]bool{},
		snaps: map[int64]Rows{}, seq: engineSeq.Add(1)}
	e.token = fmt.Sprintf("e%d", e.seq)
	engines.Store(e.token, e)
	// Doris compares strings case-sensitively, LIKE included; SQLite's LIKE
	// ignores ASCII case unless told otherwise.
	if _, err := conn.ExecContext(ctx, "PRAGMA case_sensitive_like = ON"); err != nil {
		e.Close()
		return nil, fmt.Errorf("sqlexec: configure: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("driver connection %T cannot register an authorizer", dc)
		}
		return r.RegisterAuthorizer(readOnlyAuthorizer(e.user.Load))
	})
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("sqlexec: install read-only authorizer: %w", err)
	}
	return e, nil
}

// Close releases the engine. It is idempotent.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	engines.Delete(e.token)
	return errors.Join(e.conn.Close(), e.db.Close())
}

// Query runs one SELECT (or other read-only statement) with currentDB as the
// default database for unqualified table names; currentDB may be empty (no
// database selected). tables should list every table of every database: a
// table declared earlier and missing now is dropped. Statements that would
// change anything fail with ErrNotReadOnly; SQL errors carry SQLite's message
// (the MySQL front maps them to Doris's). The query stops with ctx: callers
// set its deadline (the MySQL front applies query_timeout).
func (e *Engine) Query(ctx context.Context, currentDB string, tables []Table, query string) (*Result, error) {
	if err := checkReadOnly(query); err != nil {
		return nil, &Error{Code: errUnknown, Message: err.Error(), Err: err}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if err := e.sync(ctx, currentDB, tables); err != nil {
		return nil, &Error{Code: errUnknown, Message: "emulator SQL engine: declare tables: " + err.Error(), Err: err}
	}
	defer func() {
		e.snapMu.Lock()
		clear(e.snaps)
		e.snapMu.Unlock()
	}()
	res, err := e.run(ctx, query)
	if err != nil {
		dbExists := func(db string) bool { return db == currentDB || e.attached[db] }
		de := dorisError(ctx, err, currentDB, dbExists, [2]uint64{e.seq, e.queries.Add(1)})
		switch de.near {
		case "":
		case "\x00eof":
			de.Message = parseErrorMessage(query, "")
		default:
			de.Message = parseErrorMessage(query, de.near)
		}
		return nil, hint(de)
	}
	return res, nil
}

// run executes query as a user statement. Callers hold e.mu.
func (e *Engine) run(ctx context.Context, query string) (*Result, error) {
	e.user.Store(true)
	defer e.user.Store(false)
	rows, err := e.conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	decl := make([]string, len(types))
	for i, t := range types {
		decl[i] = strings.ToUpper(t.DatabaseTypeName())
	}
	res := &Result{Columns: cols, Types: make([]string, len(cols)), Rows: [][]any{}}
	for i, d := range decl {
		res.Types[i] = DorisType(d)
	}
	ptrs := make([]any, len(cols))
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			vals[i] = formatValue(v, decl[i])
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// hint adds advice to a converted SQLite error about MySQL/Doris syntax the
// engine lacks.
func hint(e *Error) *Error {
	switch msg := e.Message; {
	case strings.Contains(msg, "wrong number of arguments to function COUNT()"),
		strings.Contains(msg, "DISTINCT aggregates must have exactly one argument"):
		e.Message = "COUNT(DISTINCT a, b) is not supported by the emulator: use COUNT(DISTINCT a || '|' || b)"
	case strings.Contains(msg, "not authorized"):
		e.Message = ErrNotReadOnly.Error()
		e.Err = errors.Join(e.Err, ErrNotReadOnly)
	}
	return e
}
