package schema

import (
	"strconv"
	"strings"
)

// scalarTypes are the Doris type names ParseCreateTable accepts, with the
// number of parameters each may take (max; 0 = none).
var scalarTypes = map[string]int{
	"BOOLEAN": 0, "BOOL": 0,
	"TINYINT": 1, "SMALLINT": 1, "INT": 1, "INTEGER": 1, "BIGINT": 1, "LARGEINT": 1,
	"FLOAT": 0, "DOUBLE": 0,
	"DECIMAL": 2, "DECIMALV2": 2, "DECIMALV3": 2,
	"DATE": 0, "DATEV1": 0, "DATEV2": 0,
	"DATETIME": 1, "DATETIMEV1": 0, "DATETIMEV2": 1,
	"CHAR": 1, "VARCHAR": 1, "STRING": 0, "TEXT": 0,
	"JSON": 0, "JSONB": 0, "VARIANT": 0,
	"HLL": 0, "BITMAP": 0, "QUANTILE_STATE": 0,
	"IPV4": 0, "IPV6": 0,
}

// typeNode is a parsed column type.
type typeNode struct {
	name   string     // upper case
	params []string   // DECIMAL(27,9) → ["27","9"]
	args   []typeNode // ARRAY<T>, MAP<K,V>
	fields []field    // STRUCT<name:T,...>
}

type field struct {
	name string
	typ  typeNode
}

// format renders the type; lower selects Doris's lower-case SHOW CREATE
// TABLE style, else the canonical upper-case Column.Type form. Struct field
// names keep their case.
func (t typeNode) format(lower bool) string {
	name := t.name
	if lower {
		name = strings.ToLower(name)
	}
	var b strings.Builder
	b.WriteString(name)
	switch {
	case len(t.params) > 0:
		b.WriteString("(" + strings.Join(t.params, ",") + ")")
	case t.name == "STRUCT":
		b.WriteString("<")
		for i, f := range t.fields {
			if i > 0 {
				b.WriteString(",")
			}
			if isPlainName(f.name) {
				b.WriteString(f.name)
			} else {
				b.WriteString(quoteIdent(f.name))
			}
			b.WriteString(":" + f.typ.format(lower))
		}
		b.WriteString(">")
	case len(t.args) > 0:
		b.WriteString("<")
		for i, a := range t.args {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(a.format(lower))
		}
		b.WriteString(">")
	}
	return b.String()
}

// isPlainName reports whether s can be written without backticks.
func isPlainName(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			return false
		}
	}
	return true
}

// parseType reads a column type: a scalar name with optional (n[,m]), or
// ARRAY<T>, MAP<K,V>, STRUCT<name:T,...>.
func (p *parser) parseType(depth int) (typeNode, error) {
	if depth > 32 {
		return typeNode{}, p.errorf("type nested too deeply")
	}
	t := p.next()
	if t.kind != tokWord {
		return typeNode{}, p.errorAt(t, "expected a column type")
	}
	name := strings.ToUpper(t.text)
	switch name {
	case "ARRAY", "MAP":
		n := typeNode{name: name}
		if err := p.expectSym("<", "after "+name); err != nil {
			return typeNode{}, err
		}
		want := 1
		if name == "MAP" {
			want = 2
		}
		for i := 0; i < want; i++ {
			if i > 0 {
				if err := p.expectSym(",", "between MAP key and value types"); err != nil {
					return typeNode{}, err
				}
			}
			a, err := p.parseType(depth + 1)
			if err != nil {
				return typeNode{}, err
			}
			n.args = append(n.args, a)
		}
		return n, p.expectSym(">", "to close "+name+"<...>")
	case "STRUCT":
		n := typeNode{name: name}
		if err := p.expectSym("<", "after STRUCT"); err != nil {
			return typeNode{}, err
		}
		for {
			fname, err := p.ident("a STRUCT field name")
			if err != nil {
				return typeNode{}, err
			}
			if err := p.expectSym(":", "after STRUCT field name"); err != nil {
				return typeNode{}, err
			}
			ft, err := p.parseType(depth + 1)
			if err != nil {
				return typeNode{}, err
			}
			n.fields = append(n.fields, field{name: fname, typ: ft})
			if !p.acceptSym(",") {
				break
			}
		}
		return n, p.expectSym(">", "to close STRUCT<...>")
	}
	maxParams, ok := scalarTypes[name]
	if !ok {
		return typeNode{}, p.errorAt(t, "unknown data type %s", name)
	}
	n := typeNode{name: name}
	if p.acceptSym("(") {
		for {
			num := p.next()
			if num.kind != tokNumber || strings.Contains(num.text, ".") {
				return typeNode{}, p.errorAt(num, "expected an integer parameter of %s", name)
			}
			v, err := strconv.ParseUint(num.text, 10, 31)
			if err != nil {
				return typeNode{}, p.errorAt(num, "parameter of %s out of range", name)
			}
			n.params = append(n.params, strconv.FormatUint(v, 10))
			if !p.acceptSym(",") {
				break
			}
		}
		if len(n.params) > maxParams {
			return typeNode{}, p.errorAt(t, "%s takes at most %d parameter(s), got %d", name, maxParams, len(n.params))
		}
		if err := p.expectSym(")", "to close the parameters of "+name); err != nil {
			return typeNode{}, err
		}
	}
	return n, nil
}

// parseTypeString parses a canonical Column.Type back into a typeNode.
func parseTypeString(s string) (typeNode, bool) {
	toks, err := lex(s)
	if err != nil {
		return typeNode{}, false
	}
	p := &parser{src: s, toks: toks}
	t, err := p.parseType(0)
	if err != nil || p.peek().kind != tokEOF {
		return typeNode{}, false
	}
	return t, true
}

// indexSize is the short-key index size Doris counts for a key column of
// type t (FE Type.getIndexSize), used by inferKeys.
func indexSize(t typeNode) int {
	switch t.name {
	case "BOOLEAN", "BOOL", "TINYINT":
		return 1
	case "SMALLINT":
		return 2
	case "INT", "INTEGER", "FLOAT", "DATE", "DATEV2", "IPV4":
		return 4
	case "DATEV1":
		return 3
	case "BIGINT", "DOUBLE", "DATETIME", "DATETIMEV1", "DATETIMEV2":
		return 8
	case "LARGEINT", "IPV6":
		return 16
	case "DECIMAL", "DECIMALV3":
		return decimalSize(t)
	case "DECIMALV2":
		return 12
	case "CHAR":
		if len(t.params) == 1 {
			n, _ := strconv.Atoi(t.params[0])
			return n
		}
		return 1
	case "VARCHAR":
		return 20
	}
	return 16
}

// decimalSize is the storage size of a DECIMALV3 (the default DECIMAL since
// Doris 2.0) with the given precision (default 9).
func decimalSize(t typeNode) int {
	prec := 9
	if len(t.params) > 0 {
		prec, _ = strconv.Atoi(t.params[0])
	}
	switch {
	case prec <= 9:
		return 4
	case prec <= 18:
		return 8
	case prec <= 38:
		return 16
	}
	return 32
}

// couldBeShortKey reports whether a column of type t may be an inferred key.
func couldBeShortKey(t typeNode) bool {
	switch t.name {
	case "FLOAT", "DOUBLE", "STRING", "TEXT", "JSON", "JSONB", "VARIANT",
		"HLL", "BITMAP", "QUANTILE_STATE", "ARRAY", "MAP", "STRUCT":
		return false
	}
	return true
}

// isSequenceType reports whether a column of type t may be a sequence
// column: integer and date/datetime types.
func isSequenceType(t typeNode) bool {
	switch t.name {
	case "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "LARGEINT",
		"DATE", "DATEV1", "DATEV2", "DATETIME", "DATETIMEV1", "DATETIMEV2":
		return true
	}
	return false
}
