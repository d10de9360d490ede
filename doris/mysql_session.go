package doris

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Session is one FE MySQL connection of its own (not the client's pool)
// held for a sequence of statements, so that session variables (SET
// query_timeout = N) apply to the queries that follow, and whose reads
// wait as long as the caller says (long analytical SELECTs). The same
// TLS and authentication rules as the pool apply.
type Session struct {
	db   *sql.DB
	conn *sql.Conn
}

// Session opens a session whose reads time out after readTimeout (<= 0:
// Config.RequestTimeout). The caller closes it.
func (c *Client) Session(ctx context.Context, readTimeout time.Duration) (*Session, error) {
	if c.isClosed() {
		return nil, errClosed
	}
	if readTimeout <= 0 {
		readTimeout = c.cfg.RequestTimeout
	}
	connector, err := c.mysqlConnector(readTimeout)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		if r := c.mysqlRefused.Swap(nil); r != nil {
			return nil, *r
		}
		return nil, fmt.Errorf("doris mysql %s: %w", c.cfg.MySQL, classifySQL(err))
	}
	return &Session{db: db, conn: conn}, nil
}

// Exec runs a statement that returns no rows (SET, USE).
func (s *Session) Exec(ctx context.Context, stmt string) error {
	if _, err := s.conn.ExecContext(ctx, stmt); err != nil {
		return classifySQL(err)
	}
	return nil
}

// Query runs q and returns its column names and every row as strings
// (NULL → ""). Doris errors carry their sentinel (classifySQL).
func (s *Session) Query(ctx context.Context, q string) (cols []string, out [][]string, err error) {
	rows, err := s.conn.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, classifySQL(err)
	}
	return readRows(rows)
}

// Close closes the session's connection.
func (s *Session) Close() error { return errors.Join(s.conn.Close(), s.db.Close()) }
