package mysqlfront

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Prepared statements are emulated: COM_STMT_PREPARE counts the `?`
// placeholders, COM_STMT_EXECUTE substitutes the arguments as SQL literals
// and runs the text path with binary result rows. (Doris FE prepares only
// some statements server-side; clients normally interpolate.)

// HandleStmtPrepare implements server.Handler.
func (ss *session) HandleStmtPrepare(q string) (params, columns int, ctx any, err error) {
	n := 0
	for _, t := range lex(q) {
		if t.kind == tokParam {
			n++
		}
	}
	return n, 0, nil, nil
}

// HandleStmtExecute implements server.Handler.
func (ss *session) HandleStmtExecute(_ any, q string, args []any) (*mysql.Result, error) {
	text, err := bindArgs(q, args)
	if err != nil {
		return nil, forStmt(err)
	}
	ctx, cancel := ss.statementContext()
	defer cancel()
	r, err := ss.query(ctx, text, true)
	return r, forStmt(timeoutError(ctx, err))
}

// HandleStmtClose implements server.Handler.
func (ss *session) HandleStmtClose(any) error { return nil }

// bindArgs replaces the placeholders of q by the literals of args.
func bindArgs(q string, args []any) (string, error) {
	var b strings.Builder
	last, i := 0, 0
	for _, t := range lex(q) {
		if t.kind != tokParam {
			continue
		}
		if i >= len(args) {
			return "", errf("not enough arguments for the prepared statement")
		}
		lit, err := sqlLiteral(args[i])
		if err != nil {
			return "", errf("argument %d: %s", i+1, err.Error())
		}
		b.WriteString(q[last:t.start])
		b.WriteString(lit)
		last = t.end
		i++
	}
	b.WriteString(q[last:])
	return b.String(), nil
}

// sqlLiteral renders one bound argument (as decoded by go-mysql: integers,
// floats, nil, or mysql.TypedBytes for strings, decimals and times).
func sqlLiteral(a any) (string, error) {
	switch v := a.(type) {
	case nil:
		return "NULL", nil
	case int8:
		return strconv.FormatInt(int64(v), 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint8:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case mysql.TypedBytes:
		return quoteString(string(v.Bytes)), nil
	case []byte:
		return quoteString(string(v)), nil
	case string:
		return quoteString(v), nil
	}
	return "", fmt.Errorf("unsupported argument type %T", a)
}

// quoteString quotes s as a string literal by doubling single quotes, which
// both this package's lexer and the SQL engine (SQLite) read back verbatim.
// Backslashes are left alone (SQLite has no backslash escapes; the lexer
// here would read them as MySQL escapes, which labels never contain).
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			b.WriteString("''")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
