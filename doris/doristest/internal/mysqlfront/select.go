package mysqlfront

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	q, err := ss.rewriteForEngine(st)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, ss.queryTimeout())
	defer cancel()
	res, err := eng.Query(ctx, ss.currentDB(), ss.queryTables(), q)
	if err != nil {
		qerr := ss.queryError(err)
		var qe *sqlexec.Error
		if my, ok := qerr.(*mysql.MyError); ok && errors.As(err, &qe) && qe.Timeout {
			// A SELECT past query_timeout already has Doris's answer for it.
			return nil, &timeoutAnswer{my}
		}
		return nil, qerr
	}
	return ss.typedResult(st, res)
}

// typedResult gives every column of an engine answer its Doris type: the
// declared type of a column reference, else the type inferred from the
// select item (infer.go), else one from the values; and formats the values
// as Doris prints that type (DECIMAL scale, DATETIME fraction digits).
//
// A column the engine cannot have computed as Doris does is an error
// (checkExact, combineArith's refusals).
func (ss *session) typedResult(st stmt, res *sqlexec.Result) (*resultSpec, error) {
	spec := &resultSpec{names: res.Columns, rows: res.Rows, dtypes: slices.Clone(res.Types)}
	if len(spec.dtypes) != len(spec.names) {
		spec.dtypes = make([]string, len(spec.names))
	}
	items := selectItems(st)
	var sc scope
	if len(items) == len(spec.names) {
		sc = ss.queryScope(st)
	}
	for i := range spec.names {
		if spec.dtypes[i] == "" && len(items) == len(spec.names) {
			_, expr := selectAlias(st, items[i])
			spec.dtypes[i] = ss.exprType(sc, expr)
		}
		if reason, refused := strings.CutPrefix(spec.dtypes[i], refusal); refused {
			return nil, errf("%scolumn %s: %s", sqlexec.NotEmulatedPrefix, spec.names[i], reason)
		}
		if err := checkExact(spec.names[i], spec.dtypes[i], spec.rows, i); err != nil {
			return nil, err
		}
		if spec.dtypes[i] == "" || !formatColumn(spec.rows, i, spec.dtypes[i]) {
			spec.dtypes[i] = dorisTypeOfValues(spec.rows, i)
		}
	}
	return spec, nil
}

// formatColumn rewrites column col of rows as Doris prints type t; false
// (rows untouched) when a value does not fit t.
func formatColumn(rows [][]any, col int, t string) bool {
	out := make([]any, len(rows))
	for r, row := range rows {
		v, ok := formatAs(row[col], t)
		if !ok {
			return false
		}
		out[r] = v
	}
	for r, row := range rows {
		row[col] = out[r]
	}
	return true
}

// formatAs converts one value to what the MySQL front sends for Doris type
// t; ok is false when the value is not one of t.
func formatAs(v any, t string) (any, bool) {
	if v == nil {
		return nil, true
	}
	base, args := splitType(t)
	switch base {
	case "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT":
		switch x := v.(type) {
		case int64:
			return x, true
		case float64:
			if x == float64(int64(x)) {
				return int64(x), true
			}
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, true
			}
		}
		return nil, false
	case "LARGEINT":
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10), true
		case string:
			return x, true
		}
		return nil, false
	case "FLOAT", "DOUBLE":
		f, ok := toFloat64(v)
		return f, ok
	case "DECIMAL":
		_, s := typeArgs(args, 9, 0)
		switch x := v.(type) {
		case int64:
			return strconv.FormatFloat(float64(x), 'f', s, 64), true
		case float64:
			return strconv.FormatFloat(x, 'f', s, 64), true
		case string:
			f, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return nil, false
			}
			if _, frac, _ := strings.Cut(x, "."); len(frac) == s && !strings.ContainsAny(x, "eE") {
				return x, true // exact text of a DECIMAL column: keep every digit
			}
			return strconv.FormatFloat(f, 'f', s, 64), true
		}
		return nil, false
	case "DATE", "DATETIME":
		x, ok := v.(string)
		if !ok {
			return nil, false
		}
		if _, ok := sqlexec.ParseDatetime(x); !ok {
			return nil, false
		}
		if base == "DATE" {
			return sqlexec.FormatDate(x), true
		}
		p, _ := typeArgs(args, 0, 0)
		return sqlexec.FormatDatetime(x, p), true
	}
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return nil, false
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
	case len(e) == 1 && e[0].isUserVar():
		return ss.userVar(e[0].val), true, nil
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
