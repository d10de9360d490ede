package mysqlfront

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
)

// Arithmetic (+ - * / %) is evaluated by SQLite, whose rules differ from
// Doris's; the emulator makes the answer Doris's where that is cheap and
// certain and refuses it (sqlexec.NotEmulatedPrefix) where it is not:
//
//   - x / y: Doris divides integers into a DOUBLE (TypeCoercionUtils.
//     processDivide), SQLite truncates; the rewrite multiplies the left
//     operand by 1.0 first. A DECIMAL operand of / is refused (Divide's
//     DECIMAL result type is not emulated).
//   - A string literal operand: Doris checks it parses as a number and
//     fails the query otherwise ("string literal '12abc' cannot be cast to
//     double", TypeCoercionUtils.processBinaryArithmetic); a string column
//     is cast to DOUBLE, so '12abc' is NULL: the rewrite wraps it in
//     doris_cast(col, 'DOUBLE').
//   - A DECIMAL column value of more than 15 significant digits is refused
//     by the engine where a query reads it (sqlexec.MaxExactDigits).
//   - Results: an integer-typed column whose value SQLite turned into a
//     REAL (int64 overflow) and a DECIMAL-typed column whose float64 value
//     needs more than 15 significant digits at its scale are refused
//     (checkExact).

// isArithOp reports whether t is an arithmetic operator.
func isArithOp(t token) bool {
	return t.kind == tokPunct && (t.val == "+" || t.val == "-" || t.val == "*" || t.val == "/" || t.val == "%")
}

// operatorWords are words after which + and - are unary.
var operatorWords = map[string]bool{
	"SELECT": true, "WHERE": true, "AND": true, "OR": true, "NOT": true, "BY": true, "ON": true,
	"WHEN": true, "THEN": true, "ELSE": true, "CASE": true, "IN": true, "IS": true, "LIKE": true,
	"BETWEEN": true, "AS": true, "DISTINCT": true, "HAVING": true, "LIMIT": true, "OFFSET": true,
	"SET": true, "VALUES": true, "INTERVAL": true, "RETURN": true, "ALL": true, "ANY": true,
}

// binaryAt reports whether the operator at toks[k] is binary: the token
// before it ends an operand.
func binaryAt(toks []token, k int) bool {
	if k == 0 {
		return false
	}
	p := toks[k-1]
	switch p.kind {
	case tokNumber, tokString, tokQuoted, tokVar, tokParam:
		return true
	case tokWord:
		return !operatorWords[strings.ToUpper(p.val)]
	case tokPunct:
		return p.val == ")"
	}
	return false
}

// arithNeighbour reports whether the operand spanning toks[from:to] is next
// to an arithmetic operator (before it, or after it).
func arithNeighbour(toks []token, from, to int) bool {
	return (from > 0 && isArithOp(toks[from-1])) || (to < len(toks) && isArithOp(toks[to]))
}

// intervalArith reports `'…' ± INTERVAL …`: date arithmetic, not numeric.
func intervalArith(toks []token, k int) bool {
	return k+2 < len(toks) && isArithOp(toks[k+1]) && toks[k+2].is("INTERVAL")
}

// javaBigDecimal matches what java.math.BigDecimal(String) accepts.
var javaBigDecimal = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// columnRef returns the column reference starting at toks[k] (name or
// qualifier.name; not a function call, not part of a longer dotted name):
// the index after it and the column's Doris type ("" when toks[k] starts
// none or its type is unknown).
func columnRef(sc scope, toks []token, k int) (end int, typ string) {
	if toks[k].name() == "" || (k > 0 && toks[k-1].isPunct(".")) {
		return k + 1, ""
	}
	if toks[k].kind == tokWord && operatorWords[strings.ToUpper(toks[k].val)] {
		return k + 1, ""
	}
	next := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return token{}
	}
	if next(k + 1).isPunct("(") {
		return k + 1, ""
	}
	if next(k + 1).isPunct(".") {
		if next(k+2).name() == "" || next(k+3).isPunct(".") || next(k+3).isPunct("(") {
			return k + 1, ""
		}
		return k + 3, sc.column(toks[k].name(), toks[k+2].name())
	}
	return k + 1, sc.column("", toks[k].name())
}

// isStringType reports Doris's character types.
func isStringType(t string) bool {
	base, _ := splitType(t)
	switch base {
	case "VARCHAR", "CHAR", "STRING", "TEXT":
		return true
	}
	return false
}

// isIntegerType reports Doris's integer types (BOOLEAN included).
func isIntegerType(t string) bool {
	base, _ := splitType(t)
	switch base {
	case "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT":
		return true
	}
	return false
}

// decimalOf returns precision and scale of a DECIMAL type or of an integer
// type seen as a DECIMAL (TINYINT 3, SMALLINT 5, INT 10, BIGINT 20 digits; LARGEINT capped
// at 38); ok false otherwise.
func decimalOf(t string) (p, s int, ok bool) {
	base, args := splitType(t)
	switch base {
	case "DECIMAL", "DECIMALV3":
		p, s = typeArgs(args, 9, 0)
		return p, s, true
	case "BOOLEAN":
		return 1, 0, true
	case "TINYINT":
		return 3, 0, true
	case "SMALLINT":
		return 5, 0, true
	case "INT":
		return 10, 0, true
	case "BIGINT":
		return 20, 0, true
	case "LARGEINT":
		return 38, 0, true
	}
	return 0, 0, false
}

// promoteInt is Doris's DataType.promotion of an integer type, the result
// type of integer + (Add.getDataTypeForOthers).
func promoteInt(t string) string {
	switch base, _ := splitType(t); base {
	case "BOOLEAN", "TINYINT":
		return "SMALLINT"
	case "SMALLINT":
		return "INT"
	case "INT":
		return "BIGINT"
	}
	return "LARGEINT"
}

// wider returns the integer type of higher precedence.
func wider(a, b string) string {
	rank := func(t string) int {
		switch base, _ := splitType(t); base {
		case "BOOLEAN":
			return 0
		case "TINYINT":
			return 1
		case "SMALLINT":
			return 2
		case "INT":
			return 3
		case "BIGINT":
			return 4
		}
		return 5
	}
	if rank(a) >= rank(b) {
		return a
	}
	return b
}

// refusal is an arithmetic result type meaning "not emulated: <reason>".
const refusal = "!"

// combineArith is the Doris type of `a op b`, "" when unknown, or refusal
// followed by the reason.
func combineArith(a, op, b string) string {
	if strings.HasPrefix(a, refusal) {
		return a
	}
	if strings.HasPrefix(b, refusal) {
		return b
	}
	if a == "" || b == "" {
		return ""
	}
	num := func(t string) string {
		if isStringType(t) {
			return "DOUBLE" // Doris casts a string operand to DOUBLE
		}
		return t
	}
	a, b = num(a), num(b)
	baseA, _ := splitType(a)
	baseB, _ := splitType(b)
	isFloat := func(base string) bool { return base == "DOUBLE" || base == "FLOAT" }
	_, _, decA := decimalOf(a)
	_, _, decB := decimalOf(b)
	switch {
	case isFloat(baseA) && (decB || isFloat(baseB)), isFloat(baseB) && decA:
		return "DOUBLE"
	case !decA || !decB:
		return "" // dates, JSON, …: not typed here
	}
	if isIntegerType(a) && isIntegerType(b) {
		switch op {
		case "/":
			return "DOUBLE"
		case "+":
			return promoteInt(wider(a, b))
		}
		return "BIGINT" // UNVERIFIED width for - * %: the engine's int64
	}
	p1, s1, _ := decimalOf(a)
	p2, s2, _ := decimalOf(b)
	switch op {
	case "+", "-":
		// Add.getDataTypeForDecimalV3: the wider type, one more digit.
		s := max(s1, s2)
		p := min(max(p1-s1, p2-s2)+s+1, 38)
		return "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ")"
	case "*":
		// Multiply.getDataTypeForDecimalV3: precisions and scales add.
		s := s1 + s2
		p := p1 + p2
		if p > 38 {
			return refusal + "a DECIMAL product of more than 38 digits"
		}
		return "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ")"
	}
	return refusal + "DECIMAL " + op + " (Doris's DECIMAL division and modulo result types)"
}

// arithType types expression e when it is arithmetic at its top level
// (ok); typ is "" when unknown, or refusal + reason.
func (ss *session) arithType(sc scope, e []token) (typ string, ok bool) {
	var operands [][]token
	var ops []string
	depth, start := 0, 0
	for k, t := range e {
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case depth == 0 && isArithOp(t) && binaryAt(e, k) && k > start:
			operands = append(operands, e[start:k])
			ops = append(ops, t.val)
			start = k + 1
		}
	}
	if len(ops) == 0 {
		return "", false
	}
	operands = append(operands, e[start:])
	types := make([]string, len(operands))
	for i, o := range operands {
		types[i] = ss.exprType(sc, o)
	}
	// * / % before + -, each left to right.
	var terms []string
	var termOps []string
	cur := types[0]
	for i, op := range ops {
		if op == "*" || op == "/" || op == "%" {
			cur = combineArith(cur, op, types[i+1])
			continue
		}
		terms = append(terms, cur)
		termOps = append(termOps, op)
		cur = types[i+1]
	}
	terms = append(terms, cur)
	typ = terms[0]
	for i, op := range termOps {
		typ = combineArith(typ, op, terms[i+1])
	}
	return typ, true
}

// checkExact refuses a result column the engine cannot have computed as
// Doris does: a REAL in an integer column (SQLite's int64 overflow turns
// integer arithmetic into floating point; Doris widens to LARGEINT) or a
// float64 DECIMAL value with more than sqlexec.MaxExactDigits significant
// digits at the column's scale.
func checkExact(name, typ string, rows [][]any, col int) error {
	base, args := splitType(typ)
	for _, row := range rows {
		f, isFloat := row[col].(float64)
		if !isFloat {
			continue
		}
		switch {
		case isIntegerType(typ) && (f >= 1<<63 || f < -(1<<63)):
			return errf("%scolumn %s: integer arithmetic past the BIGINT range (Doris computes it in LARGEINT; the emulator's SQL engine overflows into floating point)", sqlexec.NotEmulatedPrefix, name)
		case base == "DECIMAL":
			_, s := typeArgs(args, 9, 0)
			text := strconv.FormatFloat(f, 'f', s, 64)
			// Every printed digit counts, trailing zeros too: they claim
			// an exactness float64 has only to 15 digits.
			if n := len(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(text), "0")); n > sqlexec.MaxExactDigits {
				return errf("%scolumn %s: DECIMAL result %s has more than %d significant digits (the emulator computes DECIMAL in float64; Doris computes it exactly)", sqlexec.NotEmulatedPrefix, name, text, sqlexec.MaxExactDigits)
			}
		}
	}
	return nil
}
