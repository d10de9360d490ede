package table

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// The expression subset shared by the `columns` mapping, `where` and `delete`
// headers (docs/doris-facts.md §1.4): literals (numbers, 'strings', NULL, TRUE,
// FALSE), column names (plain or `back-quoted`), + - * / % with unary minus,
// = != <> < <= > >=, IS [NOT] NULL, [NOT] IN (...), AND / OR / NOT,
// parentheses, and the functions upper, lower, concat, trim, ltrim, rtrim,
// substr/substring, length, coalesce, ifnull. Anything else is refused at
// parse time with a "not emulated" error.

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tNum
	tStr
	tOp
)

type token struct {
	kind tokKind
	text string // ident (unquoted), number text, string value, operator
	bq   bool   // back-quoted identifier (never a keyword)
}

func tokenize(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return nil, fmt.Errorf("unterminated back-quoted name in %q", s)
			}
			out = append(out, token{kind: tIdent, text: s[i+1 : i+1+j], bq: true})
			i += j + 2
		case c == '\'' || c == '"':
			var sb strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '\\' && j+1 < len(s) {
					sb.WriteByte(s[j+1])
					j += 2
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						sb.WriteByte(c)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				sb.WriteByte(s[j])
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated string literal in %q", s)
			}
			out = append(out, token{kind: tStr, text: sb.String()})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					for k < len(s) && s[k] >= '0' && s[k] <= '9' {
						k++
					}
					j = k
				}
			}
			out = append(out, token{kind: tNum, text: s[i:j]})
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' ||
				s[j] >= '0' && s[j] <= '9' || s[j] >= 0x80 || s[j] == '$') {
				j++
			}
			out = append(out, token{kind: tIdent, text: s[i:j]})
			i = j
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch two {
			case "!=", "<>", "<=", ">=", "==":
				out = append(out, token{kind: tOp, text: two})
				i += 2
				continue
			}
			switch c {
			case '=', '<', '>', '+', '-', '*', '/', '%', '(', ')', ',':
				out = append(out, token{kind: tOp, text: string(c)})
				i++
			default:
				return nil, fmt.Errorf("unexpected character %q in %q: not emulated by doristest", c, s)
			}
		}
	}
	return append(out, token{kind: tEOF}), nil
}

// node is a parsed expression.
type node interface{}

type (
	litNode struct{ v any } // nil, *big.Rat, string, bool
	colNode struct{ name string }
	negNode struct{ x node }
	notNode struct{ x node }
	binNode struct {
		op   string
		l, r node
	}
	isNullNode struct {
		x   node
		not bool
	}
	inNode struct {
		x    node
		list []node
		not  bool
	}
	callNode struct {
		fn   string
		args []node
	}
)

var emulatedFuncs = map[string][2]int{ // name → min, max args (-1 = any)
	"upper": {1, 1}, "ucase": {1, 1}, "lower": {1, 1}, "lcase": {1, 1},
	"concat": {1, -1}, "trim": {1, 1}, "ltrim": {1, 1}, "rtrim": {1, 1},
	"substr": {2, 3}, "substring": {2, 3}, "length": {1, 1},
	"coalesce": {1, -1}, "ifnull": {2, 2},
}

type parser struct {
	toks []token
	pos  int
	src  string
}

// parseExpr parses one expression of the emulated subset.
func parseExpr(s string) (node, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: s}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tEOF {
		return nil, fmt.Errorf("unexpected %q in expression %q: not emulated by doristest", p.peek().text, s)
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

func (p *parser) isKw(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && !t.bq && strings.EqualFold(t.text, kw)
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == op
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return fmt.Errorf("expected %q in expression %q", op, p.src)
	}
	p.pos++
	return nil
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.isKw("OR") {
		p.pos++
		var r node
		if r, err = p.and(); err == nil {
			l = binNode{op: "OR", l: l, r: r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.not()
	for err == nil && p.isKw("AND") {
		p.pos++
		var r node
		if r, err = p.not(); err == nil {
			l = binNode{op: "AND", l: l, r: r}
		}
	}
	return l, err
}

func (p *parser) not() (node, error) {
	if p.isKw("NOT") {
		p.pos++
		x, err := p.not()
		return notNode{x}, err
	}
	return p.cmp()
}

func (p *parser) cmp() (node, error) {
	l, err := p.add()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tOp {
		switch t.text {
		case "=", "==", "!=", "<>", "<", "<=", ">", ">=":
			p.pos++
			r, err := p.add()
			op := t.text
			if op == "==" {
				op = "="
			} else if op == "<>" {
				op = "!="
			}
			return binNode{op: op, l: l, r: r}, err
		}
	}
	if p.isKw("IS") {
		p.pos++
		not := false
		if p.isKw("NOT") {
			p.pos++
			not = true
		}
		if !p.isKw("NULL") {
			return nil, fmt.Errorf("expected NULL after IS in %q", p.src)
		}
		p.pos++
		return isNullNode{x: l, not: not}, nil
	}
	not := false
	if p.isKw("NOT") && p.pos+1 < len(p.toks) {
		nt := p.toks[p.pos+1]
		if nt.kind == tIdent && strings.EqualFold(nt.text, "IN") {
			p.pos++
			not = true
		}
	}
	if p.isKw("IN") {
		p.pos++
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		list, err := p.listUntilClose(p.add, false)
		if err != nil {
			return nil, err
		}
		return inNode{x: l, list: list, not: not}, nil
	}
	for _, kw := range []string{"LIKE", "BETWEEN", "REGEXP", "RLIKE"} {
		if p.isKw(kw) {
			return nil, fmt.Errorf("operator %s in %q is not emulated by doristest", kw, p.src)
		}
	}
	return l, nil
}

func (p *parser) add() (node, error) {
	l, err := p.mul()
	for err == nil && (p.isOp("+") || p.isOp("-")) {
		op := p.next().text
		var r node
		if r, err = p.mul(); err == nil {
			l = binNode{op: op, l: l, r: r}
		}
	}
	return l, err
}

func (p *parser) mul() (node, error) {
	l, err := p.unary()
	for err == nil && (p.isOp("*") || p.isOp("/") || p.isOp("%")) {
		op := p.next().text
		var r node
		if r, err = p.unary(); err == nil {
			l = binNode{op: op, l: l, r: r}
		}
	}
	return l, err
}

func (p *parser) unary() (node, error) {
	if p.isOp("-") {
		p.pos++
		x, err := p.unary()
		return negNode{x}, err
	}
	if p.isOp("+") {
		p.pos++
		return p.unary()
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case tNum:
		r, ok := parseDecimalText(t.text)
		if !ok {
			return nil, fmt.Errorf("bad number %q in %q", t.text, p.src)
		}
		return litNode{r}, nil
	case tStr:
		return litNode{t.text}, nil
	case tOp:
		if t.text == "(" {
			n, err := p.or()
			if err != nil {
				return nil, err
			}
			return n, p.expectOp(")")
		}
	case tIdent:
		if !t.bq {
			switch strings.ToUpper(t.text) {
			case "NULL":
				return litNode{nil}, nil
			case "TRUE":
				return litNode{true}, nil
			case "FALSE":
				return litNode{false}, nil
			}
		}
		if !t.bq && p.isOp("(") {
			p.pos++
			fn := strings.ToLower(t.text)
			lim, ok := emulatedFuncs[fn]
			if !ok {
				return nil, fmt.Errorf("function %s in %q is not emulated by doristest", t.text, p.src)
			}
			args, err := p.listUntilClose(p.or, true)
			if err != nil {
				return nil, err
			}
			if len(args) < lim[0] || lim[1] >= 0 && len(args) > lim[1] {
				return nil, fmt.Errorf("wrong number of arguments to %s in %q", t.text, p.src)
			}
			return callNode{fn: fn, args: args}, nil
		}
		return colNode{t.text}, nil
	}
	return nil, fmt.Errorf("unexpected %q in expression %q: not emulated by doristest", t.text, p.src)
}

// columnRefs lists the column names n refers to.
func columnRefs(n node, out []string) []string {
	switch x := n.(type) {
	case colNode:
		return append(out, x.name)
	case negNode:
		return columnRefs(x.x, out)
	case notNode:
		return columnRefs(x.x, out)
	case binNode:
		return columnRefs(x.r, columnRefs(x.l, out))
	case isNullNode:
		return columnRefs(x.x, out)
	case inNode:
		out = columnRefs(x.x, out)
		for _, e := range x.list {
			out = columnRefs(e, out)
		}
	case callNode:
		for _, e := range x.args {
			out = columnRefs(e, out)
		}
	}
	return out
}

// val is an evaluated value: v is nil, bool, *big.Rat, string or jsonRaw
// (untyped), or a stored value of column type *t.
type val struct {
	v any
	t *colType
}

// env resolves column names during evaluation.
type env interface {
	lookup(name string) (val, bool)
}

func eval(n node, e env) (val, error) {
	switch x := n.(type) {
	case litNode:
		return val{v: x.v}, nil
	case colNode:
		v, ok := e.lookup(x.name)
		if !ok {
			return val{}, fmt.Errorf("unknown column '%s'", x.name)
		}
		if r, isRaw := v.v.(jsonRaw); isRaw {
			s, isStr, ok := jsonText(r)
			switch {
			case !ok:
				return val{}, nil
			case isStr:
				return val{v: s}, nil
			default:
				if rat, ok := parseDecimalText(s); ok {
					return val{v: rat}, nil
				}
				return val{v: s}, nil
			}
		}
		return v, nil
	case negNode:
		v, err := eval(x.x, e)
		if err != nil || v.v == nil {
			return val{}, err
		}
		r, ok := toRat(v)
		if !ok {
			return val{}, nil
		}
		return val{v: new(big.Rat).Neg(r)}, nil
	case notNode:
		v, err := eval(x.x, e)
		if err != nil || v.v == nil {
			return val{}, err
		}
		return val{v: !truthy(v)}, nil
	case isNullNode:
		v, err := eval(x.x, e)
		return val{v: (v.v == nil) != x.not}, err
	case inNode:
		v, err := eval(x.x, e)
		if err != nil || v.v == nil {
			return val{}, err
		}
		sawNull := false
		for _, it := range x.list {
			w, err := eval(it, e)
			if err != nil {
				return val{}, err
			}
			c, ok := compareVals(v, w)
			if !ok {
				sawNull = true
				continue
			}
			if c == 0 {
				return val{v: !x.not}, nil
			}
		}
		if sawNull {
			return val{}, nil
		}
		return val{v: x.not}, nil
	case binNode:
		return evalBin(x, e)
	case callNode:
		return evalCall(x, e)
	}
	return val{}, fmt.Errorf("unsupported expression")
}

func evalBin(x binNode, e env) (val, error) {
	l, err := eval(x.l, e)
	if err != nil {
		return val{}, err
	}
	switch x.op {
	case "AND", "OR":
		r, err := eval(x.r, e)
		if err != nil {
			return val{}, err
		}
		// three-valued logic
		lb, rb := l.v != nil && truthy(l), r.v != nil && truthy(r)
		if x.op == "AND" {
			if l.v != nil && !lb || r.v != nil && !rb {
				return val{v: false}, nil
			}
			if l.v == nil || r.v == nil {
				return val{}, nil
			}
			return val{v: true}, nil
		}
		if lb || rb {
			return val{v: true}, nil
		}
		if l.v == nil || r.v == nil {
			return val{}, nil
		}
		return val{v: false}, nil
	}
	r, err := eval(x.r, e)
	if err != nil {
		return val{}, err
	}
	if l.v == nil || r.v == nil {
		return val{}, nil
	}
	switch x.op {
	case "=", "!=", "<", "<=", ">", ">=":
		c, ok := compareVals(l, r)
		if !ok {
			return val{}, nil
		}
		var b bool
		switch x.op {
		case "=":
			b = c == 0
		case "!=":
			b = c != 0
		case "<":
			b = c < 0
		case "<=":
			b = c <= 0
		case ">":
			b = c > 0
		case ">=":
			b = c >= 0
		}
		return val{v: b}, nil
	}
	a, ok1 := toRat(l)
	b, ok2 := toRat(r)
	if !ok1 || !ok2 {
		return val{}, nil // Doris casts non-numeric text to NULL in arithmetic
	}
	switch x.op {
	case "+":
		return val{v: new(big.Rat).Add(a, b)}, nil
	case "-":
		return val{v: new(big.Rat).Sub(a, b)}, nil
	case "*":
		return val{v: new(big.Rat).Mul(a, b)}, nil
	case "/":
		if b.Sign() == 0 {
			return val{}, nil // division by zero is NULL in Doris
		}
		return val{v: new(big.Rat).Quo(a, b)}, nil
	case "%":
		if b.Sign() == 0 || !a.IsInt() || !b.IsInt() {
			return val{}, nil
		}
		return val{v: new(big.Rat).SetInt(new(big.Int).Rem(a.Num(), b.Num()))}, nil
	}
	return val{}, fmt.Errorf("operator %s is not emulated by doristest", x.op)
}

func evalCall(x callNode, e env) (val, error) {
	args := make([]val, len(x.args))
	for i, a := range x.args {
		v, err := eval(a, e)
		if err != nil {
			return val{}, err
		}
		args[i] = v
	}
	switch x.fn {
	case "coalesce", "ifnull":
		for _, a := range args {
			if a.v != nil {
				return a, nil
			}
		}
		return val{}, nil
	}
	for _, a := range args {
		if a.v == nil {
			return val{}, nil
		}
	}
	s := toText(args[0])
	switch x.fn {
	case "upper", "ucase":
		return val{v: strings.ToUpper(s)}, nil
	case "lower", "lcase":
		return val{v: strings.ToLower(s)}, nil
	case "trim":
		return val{v: strings.Trim(s, " ")}, nil
	case "ltrim":
		return val{v: strings.TrimLeft(s, " ")}, nil
	case "rtrim":
		return val{v: strings.TrimRight(s, " ")}, nil
	case "length":
		return val{v: new(big.Rat).SetInt64(int64(len(s)))}, nil
	case "concat":
		var sb strings.Builder
		for _, a := range args {
			sb.WriteString(toText(a))
		}
		return val{v: sb.String()}, nil
	case "substr", "substring":
		pos, ok := toRat(args[1])
		if !ok || !pos.IsInt() {
			return val{}, nil
		}
		runes := []rune(s)
		p := int(pos.Num().Int64())
		if p < 0 {
			p = len(runes) + p + 1
		}
		if p < 1 || p > len(runes) {
			return val{v: ""}, nil
		}
		end := len(runes)
		if len(args) == 3 {
			l, ok := toRat(args[2])
			if !ok || !l.IsInt() {
				return val{}, nil
			}
			if n := int(l.Num().Int64()); n < 0 {
				return val{v: ""}, nil
			} else if p-1+n < end {
				end = p - 1 + n
			}
		}
		return val{v: string(runes[p-1 : end])}, nil
	}
	return val{}, fmt.Errorf("function %s is not emulated by doristest", x.fn)
}

func truthy(v val) bool {
	switch x := v.v.(type) {
	case bool:
		return x
	case *big.Rat:
		return x.Sign() != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		r, ok := parseDecimalText(strings.TrimSpace(x))
		if ok {
			return r.Sign() != 0
		}
		return strings.EqualFold(x, "true")
	}
	return false
}

// toRat reads v as an exact number.
func toRat(v val) (*big.Rat, bool) {
	switch x := v.v.(type) {
	case *big.Rat:
		return x, true
	case bool:
		if x {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case string:
		if v.t != nil && !v.t.isNumeric() {
			return nil, false
		}
		return parseDecimalText(strings.TrimSpace(x))
	}
	return nil, false
}

// toText prints v the way Doris casts it to VARCHAR.
func toText(v val) string {
	switch x := v.v.(type) {
	case string:
		return x
	case *big.Rat:
		return ratText(x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return ""
}

// compareVals compares two non-NULL values. A typed column value compared
// with a literal converts the literal to the column's type first (so dates,
// decimals and text compare like Doris); otherwise numbers compare
// numerically when either side is a number, and text byte-wise.
func compareVals(a, b val) (int, bool) {
	if a.v == nil || b.v == nil {
		return 0, false
	}
	if a.t != nil && b.t == nil {
		if bv, err := convert(*a.t, b.v); err == nil && bv != nil {
			return cmpValues(*a.t, a.v, bv), true
		}
	}
	if b.t != nil && a.t == nil {
		if av, err := convert(*b.t, a.v); err == nil && av != nil {
			return cmpValues(*b.t, av, b.v), true
		}
	}
	if a.t != nil && b.t != nil && a.t.raw == b.t.raw {
		return cmpValues(*a.t, a.v, b.v), true
	}
	if isNumberVal(a) || isNumberVal(b) {
		x, ok1 := toRat(a)
		y, ok2 := toRat(b)
		if ok1 && ok2 {
			return x.Cmp(y), true
		}
	}
	return strings.Compare(toText(a), toText(b)), true
}

func isNumberVal(v val) bool {
	switch v.v.(type) {
	case *big.Rat, int64, float64, bool:
		return true
	}
	return v.t != nil && v.t.isNumeric()
}

// listUntilClose parses a comma-separated list of elem up to and including
// the closing ")" (the "(" is already consumed). An empty list is allowed
// only when allowEmpty is set (function calls, not IN lists).
func (p *parser) listUntilClose(elem func() (node, error), allowEmpty bool) ([]node, error) {
	var list []node
	if !(allowEmpty && p.isOp(")")) {
		for {
			x, err := elem()
			if err != nil {
				return nil, err
			}
			list = append(list, x)
			if !p.isOp(",") {
				break
			}
			p.pos++
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return list, nil
}
