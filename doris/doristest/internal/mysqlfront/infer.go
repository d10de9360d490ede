package mysqlfront

import (
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Result types of select items that are not plain column references (the
// engine knows those): the Doris type Nereids gives the expression, for the
// forms below; anything else is typed from its values (BIGINT, DOUBLE,
// VARCHAR).
//
//	COUNT(…), APPROX_COUNT_DISTINCT(…)     BIGINT
//	SUM(DECIMAL(p,s))                      DECIMAL(38,s)      (Sum.computePrecision)
//	SUM(integer) / SUM(LARGEINT) / SUM(FLOAT|DOUBLE)  BIGINT / LARGEINT / DOUBLE
//	AVG(DECIMAL(p,s))                      DECIMAL(38,max(s,4)) (Avg.computePrecision)
//	AVG(other number)                      DOUBLE
//	MIN, MAX, ANY_VALUE, MAX_BY, MIN_BY, IFNULL, COALESCE, NVL, ABS   type of the (first) argument
//	CAST(x AS t)                           t
//	YEAR, DAYOFYEAR / MONTH, DAY, HOUR, MINUTE, SECOND, QUARTER, DAYOFWEEK   SMALLINT / TINYINT
//	DATE, TO_DATE, CURDATE                 DATE
//	DATE_TRUNC(dt, u)                      type of dt
//	STR_TO_DATE(s, f)                      DATE without time specifiers, DATETIME(6) with %f, else DATETIME(0)
//	NOW(), CURRENT_TIMESTAMP               DATETIME(0)
//	UNIX_TIMESTAMP                         INT
//	DATE_FORMAT, FROM_UNIXTIME, CONCAT, CONCAT_WS, UPPER, LOWER, SUBSTR[ING], REPLACE, TRIM, GROUP_CONCAT  VARCHAR
//	TRUNCATE(DECIMAL(p,s), d) / ROUND(DECIMAL(p,s), d)   DECIMAL(p,d)
//	literals                               TINYINT…BIGINT by value, DECIMAL(p,s), VARCHAR
//	a + b, a - b, a * b, a / b, a % b      arith.go (combineArith)
type scope struct {
	byAlias map[string]*schema.Table // alias or table name (lower case) → table
	tables  []*schema.Table
}

// queryScope collects the tables a query names after FROM and JOIN, with
// their aliases.
func (ss *session) queryScope(st stmt) scope {
	sc := scope{byAlias: map[string]*schema.Table{}}
	toks := st.toks
	for i := 0; i < len(toks); i++ {
		if !toks[i].is("FROM") && !toks[i].is("JOIN") && !(toks[i].isPunct(",") && inFromList(toks, i)) {
			continue
		}
		name, n := qualifiedName(toks, i+1)
		if name.table == "" {
			continue
		}
		db, err := ss.resolveDB(name.db)
		if err != nil {
			continue
		}
		t, err := ss.s.b.Table(db, name.table)
		if err != nil {
			continue
		}
		sc.tables = append(sc.tables, t)
		sc.byAlias[strings.ToLower(name.table)] = t
		if n < len(toks) && toks[n].is("AS") {
			n++
		}
		if n < len(toks) && toks[n].name() != "" && !isClauseWord(toks[n]) {
			sc.byAlias[strings.ToLower(toks[n].name())] = t
		}
	}
	return sc
}

// inFromList reports whether the comma at toks[i] separates tables of a FROM
// list (the nearest clause word before it at depth 0 is FROM).
func inFromList(toks []token, i int) bool {
	depth := 0
	for k := i - 1; k >= 0; k-- {
		switch {
		case toks[k].isPunct(")"):
			depth++
		case toks[k].isPunct("("):
			if depth == 0 {
				return false
			}
			depth--
		case depth == 0 && toks[k].is("FROM"):
			return true
		case depth == 0 && (toks[k].is("SELECT") || toks[k].is("WHERE") || toks[k].is("ON") || toks[k].is("BY")):
			return false
		}
	}
	return false
}

func isClauseWord(t token) bool {
	if t.kind != tokWord {
		return false
	}
	switch strings.ToUpper(t.val) {
	case "WHERE", "JOIN", "ON", "GROUP", "ORDER", "LIMIT", "LEFT", "RIGHT", "INNER", "CROSS", "FULL",
		"UNION", "HAVING", "WINDOW", "USING", "NATURAL", "OUTER", "EXCEPT", "INTERSECT", "OFFSET":
		return true
	}
	return false
}

// column returns the type of column name (qualifier may be empty) when it
// names exactly one column type among the scope's tables.
func (sc scope) column(qualifier, name string) string {
	find := func(t *schema.Table) string {
		for _, c := range t.Columns {
			if strings.EqualFold(c.Name, name) {
				return strings.ToUpper(c.Type)
			}
		}
		return ""
	}
	if qualifier != "" {
		if t := sc.byAlias[strings.ToLower(qualifier)]; t != nil {
			return find(t)
		}
		return ""
	}
	found := ""
	for _, t := range sc.tables {
		if ty := find(t); ty != "" {
			if found != "" && found != ty {
				return ""
			}
			found = ty
		}
	}
	return found
}

// selectItems returns the top-level select list of a SELECT statement (nil
// for other shapes, or when it has a `*`).
func selectItems(st stmt) [][]token {
	toks := st.toks
	if len(toks) == 0 || !toks[0].is("SELECT") {
		return nil
	}
	i := 1
	for i < len(toks) && (toks[i].is("DISTINCT") || toks[i].is("ALL")) {
		i++
	}
	end, depth := len(toks), 0
	for k := i; k < len(toks); k++ {
		switch {
		case toks[k].isPunct("("):
			depth++
		case toks[k].isPunct(")"):
			depth--
		case depth == 0 && (toks[k].is("FROM") || toks[k].is("WHERE") || toks[k].is("GROUP") ||
			toks[k].is("ORDER") || toks[k].is("LIMIT") || toks[k].is("HAVING") || toks[k].is("UNION")):
			end = k
			k = len(toks)
		}
	}
	items := splitTop(toks[i:end])
	for _, it := range items {
		// `*` or `t.*` (not `a * b`).
		if n := len(it); n > 0 && it[n-1].isPunct("*") && (n == 1 || it[n-2].isPunct(".")) {
			return nil
		}
	}
	return items
}

// exprType infers the Doris type of expression e; "" when unknown.
func (ss *session) exprType(sc scope, e []token) string {
	for len(e) >= 2 && e[0].isPunct("(") && matchParen(e, 0) == len(e)-1 {
		e = e[1 : len(e)-1]
	}
	if t, ok := ss.arithType(sc, e); ok {
		return t
	}
	switch {
	case len(e) == 0:
		return ""
	case len(e) == 1 && e[0].name() != "" && !(e[0].kind == tokWord && isFuncWord(e[0])):
		return sc.column("", e[0].name())
	case len(e) == 1 && e[0].is("CURRENT_TIMESTAMP"):
		return "DATETIME(0)"
	case len(e) == 1 && (e[0].is("CURRENT_DATE")):
		return "DATE"
	case len(e) == 3 && e[0].name() != "" && e[1].isPunct(".") && e[2].name() != "":
		return sc.column(e[0].name(), e[2].name())
	case len(e) == 1 && (e[0].kind == tokNumber || e[0].kind == tokString):
		return dorisTypeOfLiteral(e[0])
	case len(e) == 2 && e[0].isPunct("-") && e[1].kind == tokNumber:
		return dorisTypeOfLiteral(e[1])
	case len(e) == 1 && e[0].isUserVar():
		switch ss.userVar(e[0].val).(type) {
		case int64:
			return "BIGINT"
		case float64:
			return "DOUBLE"
		case string:
			return "VARCHAR(65533)"
		}
		return ""
	case len(e) == 2 && (e[0].is("TIMESTAMP") || e[0].is("DATETIME")) && e[1].kind == tokString:
		p := 0
		if d := strings.IndexByte(e[1].val, '.'); d >= 0 {
			p = min(len(e[1].val)-d-1, 6)
		}
		return "DATETIME(" + strconv.Itoa(p) + ")"
	case len(e) == 2 && e[0].is("DATE") && e[1].kind == tokString:
		return "DATE"
	}
	if e[0].kind != tokWord || len(e) < 3 || !e[1].isPunct("(") || matchParen(e, 1) != len(e)-1 {
		return ""
	}
	args := splitTop(e[2 : len(e)-1])
	if len(args) == 1 && len(args[0]) == 0 {
		args = nil
	}
	arg := func(i int) string {
		if i >= len(args) {
			return ""
		}
		a := args[i]
		if len(a) > 0 && a[0].is("DISTINCT") {
			a = a[1:]
		}
		return ss.exprType(sc, a)
	}
	for i := range args {
		if t := arg(i); strings.HasPrefix(t, refusal) {
			return t // an argument Doris types in a way not emulated
		}
	}
	switch strings.ToUpper(e[0].val) {
	case "COUNT", "APPROX_COUNT_DISTINCT":
		return "BIGINT"
	case "SUM":
		base, args := splitType(arg(0))
		switch base {
		case "DECIMAL":
			_, s := typeArgs(args, 9, 0)
			return "DECIMAL(38," + strconv.Itoa(s) + ")"
		case "TINYINT", "SMALLINT", "INT", "BIGINT", "BOOLEAN":
			return "BIGINT"
		case "LARGEINT":
			return "LARGEINT"
		case "FLOAT", "DOUBLE":
			return "DOUBLE"
		}
	case "AVG":
		base, args := splitType(arg(0))
		switch base {
		case "DECIMAL":
			_, s := typeArgs(args, 9, 0)
			return "DECIMAL(38," + strconv.Itoa(max(s, 4)) + ")"
		case "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "FLOAT", "DOUBLE", "BOOLEAN":
			return "DOUBLE"
		}
	case "MIN", "MAX", "ANY_VALUE", "ANY", "MAX_BY", "MIN_BY", "IFNULL", "COALESCE", "NVL", "ABS":
		return arg(0)
	case "CAST":
		inner := e[2 : len(e)-1]
		for k := len(inner) - 1; k > 0; k-- {
			if inner[k].is("AS") {
				return castResultType(strings.Join(tokenVals(inner[k+1:]), ""))
			}
		}
	case "YEAR", "DAYOFYEAR":
		return "SMALLINT"
	case "MONTH", "DAY", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND", "QUARTER", "DAYOFWEEK":
		return "TINYINT"
	case "DATE", "TO_DATE", "CURDATE", "CURRENT_DATE":
		return "DATE"
	case "DATE_TRUNC":
		for i := range args {
			if t := arg(i); strings.HasPrefix(t, "DATE") {
				return t
			}
		}
	case "STR_TO_DATE":
		if len(args) == 2 && len(args[1]) == 1 && args[1][0].kind == tokString {
			f := args[1][0].val
			switch {
			case strings.Contains(f, "%f"):
				return "DATETIME(6)"
			case strings.ContainsAny(strings.ReplaceAll(f, "%%", ""), "HhiIklrsST") && strings.Contains(f, "%"):
				return "DATETIME(0)"
			}
			return "DATE"
		}
	case "NOW", "SYSDATE":
		return "DATETIME(0)"
	case "UNIX_TIMESTAMP":
		return "INT"
	case "DATE_FORMAT", "FROM_UNIXTIME", "CONCAT", "CONCAT_WS", "UPPER", "LOWER", "SUBSTR", "SUBSTRING",
		"REPLACE", "TRIM", "LTRIM", "RTRIM", "GROUP_CONCAT":
		return "VARCHAR(65533)"
	case "TRUNCATE", "ROUND":
		base, targs := splitType(arg(0))
		if base == "DECIMAL" && len(args) == 2 && len(args[1]) == 1 && args[1][0].kind == tokNumber {
			p, _ := typeArgs(targs, 9, 0)
			d, err := strconv.Atoi(args[1][0].val)
			if err == nil && d >= 0 && d <= p {
				return "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(d) + ")"
			}
		}
		if base == "DOUBLE" || base == "FLOAT" {
			return "DOUBLE"
		}
	}
	return ""
}

// isFuncWord reports words that are niladic functions rather than columns.
func isFuncWord(t token) bool { return t.is("CURRENT_TIMESTAMP") || t.is("CURRENT_DATE") }

// castResultType is the Doris type of CAST(… AS target).
func castResultType(target string) string {
	base, args := splitType(target)
	switch base {
	case "TINYINT", "SMALLINT", "BIGINT", "DOUBLE", "FLOAT":
		return base
	case "INT", "INTEGER", "SIGNED":
		return "INT"
	case "DECIMAL", "DECIMALV3", "DECIMALV2", "NUMERIC":
		p, s := typeArgs(args, 9, 0)
		return "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ")"
	case "DATE", "DATEV2":
		return "DATE"
	case "DATETIME", "DATETIMEV2", "TIMESTAMP":
		p, _ := typeArgs(args, 0, 0)
		return "DATETIME(" + strconv.Itoa(p) + ")"
	case "VARCHAR", "CHAR":
		return "VARCHAR(65533)"
	case "STRING", "TEXT":
		return "STRING"
	case "BOOLEAN", "BOOL":
		return "BOOLEAN"
	}
	return ""
}

func tokenVals(toks []token) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.val
	}
	return out
}
