package sqlexec

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Error is a failed query, with Doris's message text and MySQL error code:
// SQLite's text ("SQL logic error: no such table: t (1)") never reaches a
// client. Err is the cause (the SQLite error, ErrNotReadOnly, a context
// error), for errors.Is/As.
type Error struct {
	Code    uint16 // MySQL error code: 1105 (ER_UNKNOWN_ERROR) unless Doris uses another
	Message string // Doris's text, without the "errCode = 2, detailMessage = " prefix
	Err     error
	// DB and Table are set when the query named a table that does not
	// exist: DB is the database it was looked up in. DBMissing tells
	// whether the engine took the database for missing (it knows only the
	// databases that have tables; see UnknownTable).
	DB, Table string
	DBMissing bool
	// Timeout is true when the query ran past its deadline and Message is
	// Doris's answer for that ("query timeout, query id = …").
	Timeout bool
	// near is the text SQLite's syntax error names ("" for other errors);
	// Query turns it into Doris's parser message with its position.
	near string
}

// parseErrorMessage is Doris's Nereids parser answer (fe ParseErrorListener
// → ParseException.getMessage: "\n<message>(line L, pos P)\n"), for the
// token near which the engine's parser stopped.
func parseErrorMessage(query, near string) string {
	line, pos := 1, 0
	if near != "" {
		if i := strings.Index(query, near); i >= 0 {
			line = 1 + strings.Count(query[:i], "\n")
			pos = i - (strings.LastIndexByte(query[:i], '\n') + 1)
		}
	} else {
		line = 1 + strings.Count(query, "\n")
		pos = len(query) - (strings.LastIndexByte(query, '\n') + 1)
		near = "<EOF>"
	}
	return fmt.Sprintf("\nmismatched input '%s' (the emulator's SQL engine could not parse the query here)(line %d, pos %d)\n", near, line, pos)
}

// UnknownTable builds the error for table t not found in db, as Doris words
// it: "Database [db] does not exist." when db is missing, else
// "Table [t] does not exist in database [db].".
func UnknownTable(db, t string, dbMissing bool, cause error) *Error {
	e := &Error{Code: errUnknown, DB: db, Table: t, DBMissing: dbMissing, Err: cause}
	if dbMissing {
		e.Message = fmt.Sprintf("Database [%s] does not exist.", db)
	} else {
		e.Message = fmt.Sprintf("Table [%s] does not exist in database [%s].", t, db)
	}
	return e
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// MySQLErrorCode implements the MySQL front's CodedError.
func (e *Error) MySQLErrorCode() uint16 { return e.Code }

// errUnknown is MySQL's ER_UNKNOWN_ERROR, which Doris's AnalysisException
// uses with "errCode = 2".
const errUnknown = 1105

// SQLite messages the engine turns into Doris's. Doris's texts are from the
// Nereids analyzer as its regression suite asserts them
// (regression-test/suites/query_p0/.../query_not_exists_table_column.groovy:
// "Database [x] does not exist.", "Table [t] does not exist in database [d].",
// "Unknown column 'c' in 'table list'") and FunctionRegistry.java
// ("Can not found function 'f'").
var (
	reNoTable    = regexp.MustCompile(`no such table: (?:([^.\s]+)\.)?(\S+)`)
	reNoColumn   = regexp.MustCompile(`no such column: (\S+)`)
	reNoFunction = regexp.MustCompile(`no such function: (\S+)`)
	reSyntax     = regexp.MustCompile(`near "(.*)": syntax error`)
	reCodeSuffix = regexp.MustCompile(`\s*\(\d+\)$`)
)

// dorisError converts a failure of a user statement into an *Error with
// Doris's wording. dbs reports whether a Doris database exists.
// queryID names the query in a timeout message, printed like Doris's
// DebugUtil.printId (hi-lo in hex).
func dorisError(ctx context.Context, err error, currentDB string, dbExists func(string) bool, queryID [2]uint64) *Error {
	var de *Error
	if errors.As(err, &de) {
		return de
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			// fe qe/ResultReceiver.java: "query timeout, query id = <id>".
			return &Error{Code: errUnknown, Message: fmt.Sprintf("query timeout, query id = %x-%x", queryID[0], queryID[1]), Err: errors.Join(ctxErr, err), Timeout: true}
		}
		return &Error{Code: errUnknown, Message: "Query was cancelled", Err: errors.Join(ctxErr, err)}
	}
	msg := err.Error()
	// modernc: "<SQLite code text>: <message> (<code>)"; a Go function's
	// error (the views' fail function) arrives the same way.
	msg = reCodeSuffix.ReplaceAllString(msg, "")
	for _, p := range []string{"SQL logic error: ", "sqlexec: "} {
		if i := strings.Index(msg, p); i >= 0 {
			msg = msg[i+len(p):]
		}
	}
	switch {
	case reNoTable.MatchString(msg):
		m := reNoTable.FindStringSubmatch(msg)
		db, t := m[1], m[2]
		if db == "" {
			db = currentDB
		}
		if db == "" {
			return &Error{Code: 1046, Message: "No database selected", Err: err}
		}
		return UnknownTable(db, t, !dbExists(db), err)
	case reNoColumn.MatchString(msg):
		c := reNoColumn.FindStringSubmatch(msg)[1]
		if i := strings.LastIndexByte(c, '.'); i >= 0 {
			c = c[i+1:]
		}
		return &Error{Code: errUnknown, Message: fmt.Sprintf("Unknown column '%s' in 'table list'", c), Err: err}
	case reNoFunction.MatchString(msg):
		return &Error{Code: errUnknown, Message: fmt.Sprintf("Can not found function '%s'", reNoFunction.FindStringSubmatch(msg)[1]), Err: err}
	case reSyntax.MatchString(msg):
		near := reSyntax.FindStringSubmatch(msg)[1]
		return &Error{Code: errUnknown, Message: parseErrorMessage("", near), Err: err, near: near}
	case msg == "integer overflow":
		// SQLite's SUM past int64. Doris answers (SUM(BIGINT) is BIGINT,
		// SUM(LARGEINT) LARGEINT, Sum.java); the engine cannot, so the
		// client gets a refusal naming why, not SQLite's bare message.
		return &Error{Code: errUnknown, Message: NotEmulatedPrefix + "an integer aggregate exceeds the BIGINT range (the emulator's SQL engine computes in 64-bit integers)", Err: err}
	case strings.HasPrefix(msg, NotEmulatedPrefix):
		return &Error{Code: errUnknown, Message: msg, Err: err}
	case strings.Contains(msg, "incomplete input"):
		return &Error{Code: errUnknown, Message: parseErrorMessage("", ""), Err: err, near: "\x00eof"}
	}
	return &Error{Code: errUnknown, Message: msg, Err: err}
}
