package mysqlfront

import (
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
)

// rewriteForEngine turns the Doris syntax SQLite lacks into what the engine
// evaluates with Doris semantics:
//
//   - CAST(x AS t) → doris_cast(x, 't') (sqlexec.CastFunction): SQLite's CAST
//     reads '2024-01-02 03:04:05' AS DATETIME as the number 2024 and ignores
//     a DECIMAL's scale.
//   - TIMESTAMP '…' and DATE '…' literals → doris_cast('…', 'DATETIME(p)' /
//     'DATE').
//   - FROM dual → nothing (SQLite selects without FROM).
//   - x / y → x * 1.0 / y, a string literal operand of arithmetic that is not
//     a number refused, a string column operand cast to DOUBLE (arith.go).
//   - @name (user variable) → its value as a literal, NULL when unset, as
//     MySQL and Doris answer; @@name (system variable) → its value.
//
// An error is a CAST target the emulator cannot convert to.
func (ss *session) rewriteForEngine(st stmt) (string, error) {
	var b strings.Builder
	sc := ss.queryScope(st)
	if err := ss.rewriteSpans(&b, st, sc, 0, len(st.toks)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// rewriteSpans writes tokens [i, j) of st to b: each token and the text
// before it are copied from the original unless the token starts a construct
// to rewrite.
func (ss *session) rewriteSpans(b *strings.Builder, st stmt, sc scope, i, j int) error {
	if i >= j {
		return nil
	}
	pos := st.toks[i].start
	for k := i; k < j; k++ {
		t := st.toks[k]
		b.WriteString(st.text[pos:t.start])
		pos = t.end
		switch {
		case t.is("CAST") && k+1 < j && st.toks[k+1].isPunct("("):
			end := matchParen(st.toks, k+1)
			as, depth := -1, 0
			for m := k + 2; m < end && m < j; m++ {
				switch {
				case st.toks[m].isPunct("("):
					depth++
				case st.toks[m].isPunct(")"):
					depth--
				case depth == 0 && st.toks[m].is("AS"):
					as = m
				}
			}
			if end >= j || as < 0 || as+1 >= end {
				b.WriteString(st.text[t.start:t.end])
				continue
			}
			target := st.text[st.toks[as+1].start:st.toks[end-1].end]
			if err := sqlexec.CheckCastTarget(target); err != nil {
				return errf("%s", err.Error())
			}
			b.WriteString(sqlexec.CastFunction + "(")
			if err := ss.rewriteSpans(b, st, sc, k+2, as); err != nil {
				return err
			}
			b.WriteString(", " + quoteString(strings.ToUpper(strings.Join(strings.Fields(target), ""))) + ")")
			k = end
			pos = st.toks[end].end
		case (t.is("TIMESTAMP") || t.is("DATETIME") || t.is("DATE")) && k+1 < j && st.toks[k+1].kind == tokString:
			lit := st.toks[k+1].val
			target := "DATE"
			if !t.is("DATE") {
				p := 0
				if d := strings.IndexByte(lit, '.'); d >= 0 {
					p = min(len(strings.TrimSpace(lit[d+1:])), 6)
				}
				target = "DATETIME(" + strconv.Itoa(p) + ")"
			}
			b.WriteString(sqlexec.CastFunction + "(" + quoteString(lit) + ", '" + target + "')")
			k++
			pos = st.toks[k].end
		case t.is("FROM") && k+1 < j && st.toks[k+1].is("DUAL"):
			k++
			pos = st.toks[k].end
		case t.isPunct("/"):
			// Doris divides integers into a DOUBLE; SQLite truncates.
			// `a * 1.0 / b` groups as `(a * 1.0) / b` at the same
			// precedence, so the left operand is whatever it was.
			b.WriteString("* 1.0 /")
		case t.kind == tokString && arithNeighbour(st.toks, k, k+1) && !intervalArith(st.toks, k):
			if !javaBigDecimal.MatchString(t.val) {
				// TypeCoercionUtils.processBinaryArithmetic's check.
				return errf("string literal %s cannot be cast to double", quoteString(t.val))
			}
			b.WriteString(st.text[t.start:t.end])
		case t.name() != "":
			end, typ := columnRef(sc, st.toks, k)
			if end > j || typ == "" || !isStringType(typ) || !arithNeighbour(st.toks, k, end) {
				b.WriteString(st.text[t.start:t.end])
				continue
			}
			// A string column in arithmetic is cast to DOUBLE (Doris's
			// default coercion): '12abc' becomes NULL, not SQLite's 12.
			b.WriteString(sqlexec.CastFunction + "(" + st.text[t.start:st.toks[end-1].end] + ", 'DOUBLE')")
			k = end - 1
			pos = st.toks[k].end
		case t.kind == tokVar:
			if t.isUserVar() {
				b.WriteString(valueLiteral(ss.userVar(t.val)))
			} else {
				v, ok := ss.variable(t.val)
				if !ok {
					return errUnknownVar(t.val)
				}
				b.WriteString(valueLiteral(v))
			}
		default:
			b.WriteString(st.text[t.start:t.end])
		}
	}
	return nil
}

// matchParen returns the index of the ")" closing the "(" at toks[i], or
// len(toks) when it is not closed.
func matchParen(toks []token, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		switch {
		case toks[k].isPunct("("):
			depth++
		case toks[k].isPunct(")"):
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return len(toks)
}

// valueLiteral renders a variable's value as a SQL literal.
func valueLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return quoteString(x)
	}
	s, _ := textValue(0, v)
	return quoteString(s)
}
