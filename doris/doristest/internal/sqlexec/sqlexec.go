// Package sqlexec answers SELECT statements over the emulator's tables with a
// real SQL engine (an in-memory SQLite), so that verification and exploration
// queries from the mysql client behave like SQL rather than like a hand-grown
// subset.
//
// Each Engine owns one private in-memory SQLite connection. Query copies the
// tables it is handed into it (only those whose Version or schema changed
// since the last copy), makes unqualified names mean the current database
// (names.go), runs the statement read-only and formats the answer the way
// Doris prints it (types.go). Doris functions SQLite lacks are listed in
// functions.go.
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

// Table is one table the engine can read. Rows is called only when Version
// differs from the version the engine last copied, so callers can hand in
// every table on every query cheaply.
type Table struct {
	DB      string
	Name    string
	Schema  *schema.Table
	Version uint64
	// Rows returns the visible rows in schema column order. Values are nil,
	// int64, float64 or string (DECIMAL, dates, LARGEINT and text as strings).
	// It is called during Query, with the engine's lock held; it must not
	// call back into the Engine.
	Rows func() [][]any
}

// Result is a query answer: column labels and rows whose values are nil,
// int64, float64 or string.
type Result struct {
	Columns []string
	Rows    [][]any
}

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

	tables   map[tableKey]copiedTable
	attached map[string]bool
	gen      uint64 // bumped when the set or shape of tables changes

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
	e := &Engine{db: db, conn: conn, tables: map[tableKey]copiedTable{}, attached: map[string]bool{}}
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
	return errors.Join(e.conn.Close(), e.db.Close())
}

// Query runs one SELECT (or other read-only statement) with currentDB as the
// default database for unqualified table names; currentDB may be empty (no
// database selected). tables should list every table of every database: a
// table copied earlier and missing now is dropped. Statements that would
// change anything fail with ErrNotReadOnly; SQL errors carry SQLite's message.
func (e *Engine) Query(ctx context.Context, currentDB string, tables []Table, query string) (*Result, error) {
	if err := checkReadOnly(query); err != nil {
		return nil, fmt.Errorf("sqlexec: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if err := e.sync(ctx, currentDB, tables); err != nil {
		return nil, fmt.Errorf("sqlexec: load tables: %w", err)
	}
	res, err := e.run(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sqlexec: %w", hint(err))
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
	res := &Result{Columns: cols, Rows: [][]any{}}
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

// hint adds advice to SQLite errors about MySQL/Doris syntax it lacks.
func hint(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "wrong number of arguments to function COUNT()"),
		strings.Contains(msg, "DISTINCT aggregates must have exactly one argument"):
		return fmt.Errorf("%w (COUNT(DISTINCT a, b) is not supported by the emulator: use COUNT(DISTINCT a || '|' || b))", err)
	case strings.Contains(msg, "not authorized"):
		return fmt.Errorf("%w: %w", err, ErrNotReadOnly)
	}
	return err
}
