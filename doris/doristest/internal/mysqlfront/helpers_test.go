package mysqlfront

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// startFront serves b on a loopback listener and closes it at cleanup,
// checking that Serve returned nil.
func startFront(t *testing.T, b Backend, opts ...Option) (*Server, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(b, opts...)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, l.Addr().String()
}

// openDB opens a go-sql-driver pool; dsnTail is what follows the address
// (e.g. "/demo?x=y").
func openDB(t *testing.T, user, password, addr, dsnTail string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)%s", user, password, addr, dsnTail))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// conn returns one session of a root connection to addr.
func conn(t *testing.T, addr, db string) *sql.Conn {
	t.Helper()
	c, err := openDB(t, "root", "", addr, "/"+db).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// exec runs statements and fails the test on error.
func exec(t *testing.T, c *sql.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := c.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// queryRows runs q and returns its column names and rows as strings
// ("NULL" for NULL).
func queryRows(t *testing.T, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, args ...any) ([]string, [][]string) {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: scan: %v", q, err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return cols, out
}

// wantMySQLError checks err is a MySQL error with the code and message.
func wantMySQLError(t *testing.T, err error, code uint16, msg string) {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		t.Fatalf("error = %v, want MySQL error %d %q", err, code, msg)
	}
	if me.Number != code || me.Message != msg {
		t.Fatalf("error = %d %q, want %d %q", me.Number, me.Message, code, msg)
	}
}

func joinRows(rows [][]string) string {
	var parts []string
	for _, r := range rows {
		parts = append(parts, strings.Join(r, "|"))
	}
	return strings.Join(parts, "\n")
}
