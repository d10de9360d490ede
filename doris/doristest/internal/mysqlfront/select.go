package mysqlfront

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
)

// selectStmt answers SELECT. A select list made only of literals, system
// variables (@@x) and session functions (DATABASE(), USER(), VERSION(),
// CONNECTION_ID(), ...) without FROM is answered here, as clients send such
// queries at connect time; every other query runs on the sqlexec engine over
// the Backend's tables.
func (ss *session) selectStmt(ctx context.Context, st stmt) (*resultSpec, error) {
	if st.at(0).is("SELECT") {
		spec, ok, err := ss.selectLocal(st)
		if ok || err != nil {
			return spec, err
		}
	}
	eng, err := ss.s.engine()
	if err != nil {
		return nil, backendError(fmt.Errorf("SQL engine: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, ss.queryTimeout())
	defer cancel()
	res, err := eng.Query(ctx, ss.currentDB(), ss.queryTables(), st.text)
	if err != nil {
		qerr := ss.queryError(err)
		var qe *sqlexec.Error
		if my, ok := qerr.(*mysql.MyError); ok && errors.As(err, &qe) && qe.Timeout {
			// A SELECT past query_timeout already has Doris's answer for it.
			return nil, &timeoutAnswer{my}
		}
		return nil, qerr
	}
	return &resultSpec{names: res.Columns, rows: res.Rows}, nil
}

// selectLocal answers a FROM-less select of literals, variables and session
// functions, with an optional LIMIT. ok is false when it does not apply.
func (ss *session) selectLocal(st stmt) (spec *resultSpec, ok bool, err error) {
	toks := st.toks[1:]
	// Cut a trailing LIMIT n [OFFSET m] / LIMIT m, n.
	limit := -1
	for i, t := range toks {
		if t.is("LIMIT") {
			if i+1 < len(toks) && toks[i+1].kind == tokNumber {
				n, perr := strconv.Atoi(toks[i+1].val)
				if perr != nil {
					return nil, false, nil
				}
				limit = n
				if i+2 == len(toks) {
					toks = toks[:i]
					break
				}
			}
			return nil, false, nil
		}
	}
	if len(toks) == 0 {
		return nil, false, nil
	}
	var names []string
	var row []any
	for _, item := range splitTop(toks) {
		label, expr := selectAlias(st, item)
		if len(expr) == 0 {
			return nil, false, nil
		}
		v, handled, err := ss.localValue(expr)
		if err != nil {
			return nil, true, err
		}
		if !handled {
			return nil, false, nil
		}
		if label == "" {
			label = st.text[expr[0].start:expr[len(expr)-1].end]
		}
		names = append(names, label)
		row = append(row, v)
	}
	spec = &resultSpec{names: names}
	if limit != 0 {
		spec.rows = [][]any{row}
	}
	return spec, true, nil
}

// queryError maps an engine error to the client's. The engine knows only
// the databases that have tables; an empty database it took for missing is
// corrected here.
func (ss *session) queryError(err error) error {
	var qe *sqlexec.Error
	if errors.As(err, &qe) && qe.Table != "" && qe.DBMissing && ss.knownDB(qe.DB) == nil {
		return backendError(sqlexec.UnknownTable(qe.DB, qe.Table, false, qe.Err))
	}
	return backendError(err)
}

// splitTop splits tokens at top-level commas.
func splitTop(toks []token) [][]token {
	var out [][]token
	depth, start := 0, 0
	for i, t := range toks {
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case t.isPunct(",") && depth == 0:
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return append(out, toks[start:])
}

// selectAlias splits `expr [AS] alias`.
func selectAlias(st stmt, item []token) (string, []token) {
	n := len(item)
	if n >= 3 && item[n-2].is("AS") && (item[n-1].name() != "" || item[n-1].kind == tokString) {
		return item[n-1].val, item[:n-2]
	}
	if n >= 2 && (item[n-1].kind == tokQuoted || item[n-1].kind == tokWord) {
		// `@@x alias`, `1 one`, `DATABASE() db`.
		if p := item[n-2]; p.isPunct(")") || p.kind == tokVar || p.kind == tokNumber || p.kind == tokString {
			return item[n-1].val, item[:n-1]
		}
	}
	return "", item
}

// localValue evaluates one select item; handled is false when it needs the
// SQL engine.
func (ss *session) localValue(e []token) (v any, handled bool, err error) {
	switch {
	case len(e) == 1 && e[0].kind == tokVar:
		raw := e[0].val
		v, ok := ss.variable(raw)
		if !ok {
			return nil, true, errUnknownVar(raw)
		}
		return v, true, nil
	case len(e) == 1 && (e[0].kind == tokNumber || e[0].kind == tokString):
		return literalValue(e[0]), true, nil
	case len(e) == 1 && e[0].is("NULL"):
		return nil, true, nil
	case len(e) == 2 && e[0].isPunct("-") && e[1].kind == tokNumber:
		switch x := literalValue(e[1]).(type) {
		case int64:
			return -x, true, nil
		case float64:
			return -x, true, nil
		}
	case len(e) == 3 && e[0].kind == tokWord && e[1].isPunct("(") && e[2].isPunct(")"),
		len(e) == 1 && (e[0].is("CURRENT_USER") || e[0].is("CURRENT_TIMESTAMP")):
		return ss.sessionFunc(strings.ToUpper(e[0].val))
	}
	return nil, false, nil
}

func (ss *session) sessionFunc(name string) (any, bool, error) {
	ss.mu.Lock()
	user, host, id := ss.user, ss.host, ss.connID
	ss.mu.Unlock()
	switch name {
	case "DATABASE", "SCHEMA":
		if db := ss.currentDB(); db != "" {
			return db, true, nil
		}
		return nil, true, nil
	case "USER", "SESSION_USER", "SYSTEM_USER":
		return fmt.Sprintf("'%s'@'%s'", user, host), true, nil
	case "CURRENT_USER":
		return fmt.Sprintf("'%s'@'%%'", user), true, nil
	case "CONNECTION_ID":
		return int64(id), true, nil
	case "VERSION":
		return ss.s.cfg.serverVersion, true, nil
	case "LAST_INSERT_ID":
		return int64(0), true, nil
	case "NOW", "CURRENT_TIMESTAMP", "SYSDATE":
		return time.Now().Format(time.DateTime), true, nil
	}
	return nil, false, nil
}

// literalValue converts a literal token: integers to int64, decimals to
// float64, TRUE/FALSE/ON/OFF to 1/0, NULL to nil, anything else to text.
func literalValue(t token) any {
	switch t.kind {
	case tokNumber:
		if n, err := strconv.ParseInt(t.val, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(t.val, 64); err == nil {
			return f
		}
	case tokWord:
		switch strings.ToUpper(t.val) {
		case "TRUE", "ON":
			return int64(1)
		case "FALSE", "OFF":
			return int64(0)
		case "NULL":
			return nil
		}
	}
	return t.val
}
