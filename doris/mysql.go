package doris

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// mysqlDB opens the FE MySQL pool on first use (small: the client only
// sends occasional SHOW statements).
func (c *Client) mysqlDB() (*sql.DB, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	if c.db != nil {
		return c.db, nil
	}
	conn, err := c.mysqlConnector(c.cfg.RequestTimeout)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	c.db = db
	return db, nil
}

// mysqlConnector returns a connector to the FE MySQL port whose reads and
// writes time out after rw (the connect itself after RequestTimeout).
func (c *Client) mysqlConnector(rw time.Duration) (driver.Connector, error) {
	if c.cfg.MySQL == "" {
		return nil, errors.New("doris: Config.MySQL is not set")
	}
	mc := mysql.NewConfig()
	mc.User, mc.Passwd = c.cfg.User, c.cfg.Password
	mc.Net, mc.Addr = "tcp", c.cfg.MySQL
	// Doris cannot server-side prepare SHOW statements (the FE answers a COM_STMT_PREPARE of SHOW with an error):
	// arguments are interpolated client-side with proper quoting.
	mc.InterpolateParams = true
	mc.Timeout = c.cfg.RequestTimeout
	mc.ReadTimeout, mc.WriteTimeout = rw, rw
	if err := c.mysqlSecurity(mc); err != nil {
		return nil, err
	}
	mc.Logger = mysqlLogger{c}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("doris mysql %s: %w", c.cfg.MySQL, err)
	}
	return conn, nil
}

type mysqlLogger struct{ c *Client }

func (l mysqlLogger) Print(v ...any) { l.c.log.Debug("mysql driver", "msg", fmt.Sprint(v...)) }

// quoteIdent quotes a MySQL identifier with backticks.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// sqlError carries a driver error and the sentinel its message maps to.
type sqlError struct {
	err      error
	sentinel error
}

func (e *sqlError) Error() string   { return e.err.Error() }
func (e *sqlError) Unwrap() []error { return []error{e.err, e.sentinel} }

// classifySQL attaches the sentinel of a Doris error message (one table:
// messageCodes), e.g. "transaction with label x does not exist" →
// ErrTxnNotFound, "Access denied" → ErrUnauthorized.
func classifySQL(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if s := classify(me.Message); s != nil {
			return &sqlError{err: err, sentinel: s}
		}
	}
	return err
}

// TransactionByLabel runs SHOW TRANSACTION FROM db WHERE LABEL = label over
// the FE MySQL protocol (§6.2) and returns the label's latest txn. Errors:
// ErrTxnNotFound when no txn has the label (never used or cleaned),
// ErrUnauthorized, driver errors. A read: safe to retry.
func (c *Client) TransactionByLabel(ctx context.Context, db, label string) (*Transaction, error) {
	q := "SHOW TRANSACTION FROM " + quoteIdent(db) + " WHERE LABEL = ?"
	t, err := c.showTransaction(ctx, q, label)
	if err != nil {
		return nil, fmt.Errorf("show transaction label %s in db %s: %w", label, db, err)
	}
	return t, nil
}

// TransactionByID runs SHOW TRANSACTION FROM db WHERE ID = id (§6.2).
// Errors as TransactionByLabel.
func (c *Client) TransactionByID(ctx context.Context, db string, id int64) (*Transaction, error) {
	q := "SHOW TRANSACTION FROM " + quoteIdent(db) + " WHERE ID = " + strconv.FormatInt(id, 10)
	t, err := c.showTransaction(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("show transaction %d in db %s: %w", id, db, err)
	}
	return t, nil
}

// TransactionsByLabelLike runs SHOW TRANSACTION FROM db WHERE LABEL LIKE
// pattern over the FE MySQL protocol (docs/doris-facts.md §6.2) and returns every
// txn whose label matches, newest first; a label aborted and reused has one
// txn per attempt. The pattern is sent as a quoted string literal.
//
// Doris (ShowTransactionCommand) turns each % of pattern into .* and matches
// whole labels against the result as a case-sensitive Java regular
// expression: _ is a literal there, while SQL LIKE (and doristest) treats it
// as any one character. Callers after an exact prefix should use prefix+"%"
// with a prefix of label characters ([-_A-Za-z0-9:], which mean themselves
// in both) and filter again with strings.HasPrefix.
//
// No match is an empty list, not an error: Doris answers LIKE with an empty
// result set, and an FE answering "does not exist" (ErrTxnNotFound) is mapped
// to an empty list too. Only txns the FE still keeps are listed (label
// retention, docs/doris-facts.md §4). Errors: ErrUnauthorized; a Doris without LIKE
// support answers its bad-predicate message (a driver error); driver errors.
// A read: safe to retry.
func (c *Client) TransactionsByLabelLike(ctx context.Context, db, pattern string) ([]Transaction, error) {
	q := "SHOW TRANSACTION FROM " + quoteIdent(db) + " WHERE LABEL LIKE ?"
	ts, err := c.showTransactions(ctx, q, pattern)
	if err != nil {
		return nil, fmt.Errorf("show transaction label like %q in db %s: %w", pattern, db, err)
	}
	return ts, nil
}

// TransactionsByStatus runs SHOW TRANSACTION FROM db WHERE STATUS = status
// (docs/doris-facts.md §6.2): every txn of the db in that state, newest first.
// status is one of TxnPrepare, TxnPrecommitted, TxnCommitted, TxnVisible,
// TxnAborted (Doris refuses UNKNOWN). None is an empty list. Errors as
// TransactionsByLabelLike. A read: safe to retry.
func (c *Client) TransactionsByStatus(ctx context.Context, db string, status TxnStatus) ([]Transaction, error) {
	q := "SHOW TRANSACTION FROM " + quoteIdent(db) + " WHERE STATUS = ?"
	ts, err := c.showTransactions(ctx, q, strings.ToLower(string(status)))
	if err != nil {
		return nil, fmt.Errorf("show transaction status %s in db %s: %w", status, db, err)
	}
	return ts, nil
}

// TableRowCount runs SELECT COUNT(*) FROM db.table over the FE MySQL
// protocol: the rows visible now (after merge on Unique Key tables and
// aggregation on Aggregate Key tables, so only a Duplicate Key table's count
// equals the rows loaded into it). Errors: ErrUnauthorized, driver errors
// (an unknown table among them). A read: safe to retry.
func (c *Client) TableRowCount(ctx context.Context, db, table string) (int64, error) {
	what := fmt.Sprintf("count rows of %s.%s", db, table)
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	_, rows, err := c.query(ctx, "SELECT COUNT(*) FROM "+quoteIdent(db)+"."+quoteIdent(table))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, fmt.Errorf("%s: want one value, got %d rows", what, len(rows))
	}
	n, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return n, nil
}

func (c *Client) showTransactions(ctx context.Context, q string, args ...any) ([]Transaction, error) {
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	cols, rows, err := c.query(ctx, q, args...)
	if errors.Is(err, ErrTxnNotFound) {
		return []Transaction{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Transaction, 0, len(rows))
	for _, r := range rows {
		t, err := parseTransaction(cols, r)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, nil
}

func (c *Client) showTransaction(ctx context.Context, q string, args ...any) (*Transaction, error) {
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	cols, rows, err := c.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrTxnNotFound
	}
	return parseTransaction(cols, rows[0])
}

// parseTransaction maps SHOW TRANSACTION columns by name (§6.2,
// TransactionColumns) so older Dorises with fewer columns still parse.
// NULL (read as "") and \N are empty.
func parseTransaction(cols, vals []string) (*Transaction, error) {
	var t Transaction
	for i, col := range cols {
		v := vals[i]
		if v == `\N` {
			v = ""
		}
		var err error
		switch col {
		case "TransactionId":
			t.ID, err = parseInt(v)
		case "Label":
			t.Label = v
		case "Coordinator":
			t.Coordinator = v
		case "TransactionStatus":
			t.Status = TxnStatus(v)
		case "LoadJobSourceType":
			t.SourceType = v
		case "PrepareTime":
			t.PrepareTime, err = parseTime(v)
		case "PreCommitTime":
			t.PreCommitTime, err = parseTime(v)
		case "CommitTime":
			t.CommitTime, err = parseTime(v)
		case "PublishTime":
			t.PublishTime, err = parseTime(v)
		case "FinishTime":
			t.FinishTime, err = parseTime(v)
		case "Reason":
			t.Reason = v
		case "ErrorReplicasCount":
			t.ErrorReplicasCount, err = parseInt(v)
		case "ListenerId":
			t.ListenerID, err = parseInt(v)
		case "TimeoutMs":
			t.TimeoutMs, err = parseInt(v)
		case "ErrMsg":
			t.ErrMsg = v
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", col, err)
		}
	}
	return &t, nil
}

func parseInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// parseTime parses a SHOW TRANSACTION time (TimeLayout, FE local time);
// "" (NULL or \N) is the zero time.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.ParseInLocation(TimeLayout, s, time.Local)
}

// ShowCreateTable runs SHOW CREATE TABLE db.table over the FE MySQL
// protocol and parses the DDL with schema.ParseCreateTable. Table.Database
// is set to db when the DDL has no qualifier. Errors: ErrNotFound for an
// unknown db/table (when Doris's message says so), ErrUnauthorized, parse
// errors.
func (c *Client) ShowCreateTable(ctx context.Context, db, table string) (*schema.Table, error) {
	what := fmt.Sprintf("show create table %s.%s", db, table)
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	_, rows, err := c.query(ctx, "SHOW CREATE TABLE "+quoteIdent(db)+"."+quoteIdent(table))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(rows) == 0 || len(rows[0]) < 2 {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	t, err := schema.ParseCreateTable(rows[0][1])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if t.Database == "" {
		t.Database = db
	}
	return t, nil
}

// FrontendConfig runs ADMIN SHOW FRONTEND CONFIG LIKE pattern and returns
// Key → Value (e.g. "stream_load_default_precommit_timeout_second" →
// "3600"). Needs ADMIN privilege on real Doris.
func (c *Client) FrontendConfig(ctx context.Context, pattern string) (map[string]string, error) {
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	cols, rows, err := c.query(ctx, "ADMIN SHOW FRONTEND CONFIG LIKE ?", pattern)
	if err != nil {
		return nil, fmt.Errorf("frontend config %q: %w", pattern, err)
	}
	ki, vi := 0, 1
	for i, col := range cols {
		switch strings.ToLower(col) {
		case "key", "name":
			ki = i
		case "value":
			vi = i
		}
	}
	out := make(map[string]string, len(rows))
	for _, vals := range rows {
		if ki < len(vals) && vi < len(vals) {
			out[vals[ki]] = vals[vi]
		}
	}
	return out, nil
}

// query runs q and returns its column names and every row as strings
// (NULL → ""). Doris errors carry their sentinel (classifySQL).
func (c *Client) query(ctx context.Context, q string, args ...any) (cols []string, out [][]string, err error) {
	db, err := c.mysqlDB()
	if err != nil {
		return nil, nil, err
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		if r := c.mysqlRefused.Swap(nil); r != nil {
			return nil, nil, *r // the driver only says "invalid connection"
		}
		switch {
		case errors.Is(err, mysql.ErrNoTLS):
			return nil, nil, fmt.Errorf("doris mysql %s: the FE's MySQL port offers no TLS and MySQLTLS is required "+
				"(the default with doris.tls.*): set enable_ssl in fe.conf, or doris.mysql_tls: preferred or off: %w", c.cfg.MySQL, err)
		case errors.Is(err, mysql.ErrCleartextPassword):
			return nil, nil, fmt.Errorf("doris mysql %s: the account needs the cleartext plugin (Doris LDAP), refused "+
				"over a connection that may be plaintext: set doris.mysql_tls: required (or doris.mysql_allow_insecure_auth): %w", c.cfg.MySQL, err)
		}
		return nil, nil, classifySQL(err)
	}
	return readRows(rows)
}

// readRows reads rows whole, closing them: the column names and every row
// as strings (NULL → ""); Doris errors carry their sentinel (classifySQL).
func readRows(rows *sql.Rows) (cols []string, out [][]string, err error) {
	defer rows.Close()
	if cols, err = rows.Columns(); err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		vals, err := scanStrings(rows, len(cols))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, classifySQL(err)
	}
	return cols, out, nil
}

func scanStrings(rows *sql.Rows, n int) ([]string, error) {
	vals := make([]sql.NullString, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i, v := range vals {
		out[i] = v.String
	}
	return out, nil
}
