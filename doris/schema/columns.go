package schema

import "strings"

// aggTypes are the aggregations accepted after a column type.
var aggTypes = map[string]AggType{
	"SUM": AggSum, "MAX": AggMax, "MIN": AggMin, "REPLACE": AggReplace,
	"REPLACE_IF_NOT_NULL": AggReplaceIfNotNull, "HLL_UNION": AggHLLUnion,
	"BITMAP_UNION": AggBitmapUnion, "QUANTILE_UNION": AggQuantileUnion,
}

// defaultExprs are the DEFAULT expressions Doris accepts unquoted.
var defaultExprs = map[string]bool{
	"CURRENT_TIMESTAMP": true, "CURRENT_DATE": true, "PI": true, "E": true, "BITMAP_EMPTY": true,
}

// columnList reads "(" column-or-index {"," column-or-index} ")".
func (p *parser) columnList(t *Table) error {
	if err := p.expectSym("(", "after the table name"); err != nil {
		return err
	}
	for {
		if p.peek().is("INDEX") {
			if err := p.skipIndex(); err != nil {
				return err
			}
		} else {
			c, err := p.column()
			if err != nil {
				return err
			}
			t.Columns = append(t.Columns, c)
		}
		if !p.acceptSym(",") {
			break
		}
	}
	if err := p.expectSym(")", `or "," after a column definition`); err != nil {
		return err
	}
	if len(t.Columns) == 0 {
		return p.errorAt(p.toks[p.i-1], "a table needs at least one column")
	}
	return nil
}

// skipIndex skips an INDEX definition up to the next "," or ")" at depth 0.
func (p *parser) skipIndex() error {
	p.i++
	for depth := 0; ; {
		t := p.peek()
		switch {
		case t.kind == tokEOF:
			return p.errorf("unterminated INDEX definition")
		case t.isSym("("):
			depth++
		case t.isSym(")"):
			if depth == 0 {
				return nil
			}
			depth--
		case t.isSym(",") && depth == 0:
			return nil
		}
		p.i++
	}
}

// column reads one column definition.
func (p *parser) column() (Column, error) {
	name, err := p.ident("a column name or INDEX")
	if err != nil {
		return Column{}, err
	}
	typ, err := p.parseType(0)
	if err != nil {
		return Column{}, err
	}
	c := Column{Name: name, Type: typ.format(false), Nullable: true}
	seen := map[string]bool{}
	once := func(attr string, tok token) error {
		if seen[attr] {
			return p.errorAt(tok, "duplicate %s for column %s", attr, name)
		}
		seen[attr] = true
		return nil
	}
	for {
		tok := p.peek()
		if tok.kind == tokEOF || tok.isSym(",") || tok.isSym(")") {
			return c, nil
		}
		upper := strings.ToUpper(tok.text)
		switch {
		case tok.is("KEY"):
			p.i++
		case tok.kind == tokWord && aggTypes[upper] != "":
			if err := once("aggregation", tok); err != nil {
				return Column{}, err
			}
			p.i++
			c.Agg = aggTypes[upper]
		case tok.is("NOT"):
			if err := once("NULL/NOT NULL", tok); err != nil {
				return Column{}, err
			}
			p.i++
			if err := p.expect("NULL", "after NOT"); err != nil {
				return Column{}, err
			}
			c.Nullable = false
		case tok.is("NULL"):
			if err := once("NULL/NOT NULL", tok); err != nil {
				return Column{}, err
			}
			p.i++
			c.Nullable = true
		case tok.is("AUTO_INCREMENT"):
			if err := once("AUTO_INCREMENT", tok); err != nil {
				return Column{}, err
			}
			p.i++
			if p.peek().isSym("(") {
				if err := p.skipParens("after AUTO_INCREMENT"); err != nil {
					return Column{}, err
				}
			}
		case tok.is("DEFAULT"):
			if err := once("DEFAULT", tok); err != nil {
				return Column{}, err
			}
			p.i++
			if err := p.defaultValue(&c); err != nil {
				return Column{}, err
			}
		case tok.is("ON"):
			if err := once("ON UPDATE", tok); err != nil {
				return Column{}, err
			}
			p.i++
			if err := p.expect("UPDATE", "after ON"); err != nil {
				return Column{}, err
			}
			if err := p.expect("CURRENT_TIMESTAMP", "after ON UPDATE"); err != nil {
				return Column{}, err
			}
			if p.peek().isSym("(") {
				if err := p.skipParens("after ON UPDATE CURRENT_TIMESTAMP"); err != nil {
					return Column{}, err
				}
			}
		case tok.is("COMMENT"):
			if err := once("COMMENT", tok); err != nil {
				return Column{}, err
			}
			p.i++
			s, err := p.stringLit("the comment of column " + name)
			if err != nil {
				return Column{}, err
			}
			c.Comment = s
		default:
			return Column{}, p.errorf(`expected NULL, NOT NULL, DEFAULT, COMMENT, an aggregation (SUM, MAX, MIN, REPLACE, REPLACE_IF_NOT_NULL), "," or ")" after the type of column %s`, name)
		}
	}
}

// defaultValue reads the value after DEFAULT.
func (p *parser) defaultValue(c *Column) error {
	tok := p.next()
	set := func(v string, expr bool) {
		c.Default, c.DefaultExpr = &v, expr
	}
	switch {
	case tok.is("NULL"):
		c.Default, c.DefaultExpr = nil, false
	case tok.kind == tokString:
		set(tok.text, false)
	case tok.kind == tokNumber:
		set(tok.text, false)
	case tok.isSym("-"):
		num := p.next()
		if num.kind != tokNumber {
			return p.errorAt(num, "expected a number after DEFAULT -")
		}
		set("-"+num.text, false)
	case tok.kind == tokWord && defaultExprs[strings.ToUpper(tok.text)]:
		v := strings.ToUpper(tok.text)
		if v == "CURRENT_TIMESTAMP" && p.acceptSym("(") {
			num := p.next()
			if num.kind != tokNumber || strings.Contains(num.text, ".") {
				return p.errorAt(num, "expected the precision of CURRENT_TIMESTAMP")
			}
			if err := p.expectSym(")", "after the precision of CURRENT_TIMESTAMP"); err != nil {
				return err
			}
			v += "(" + strings.TrimLeft(num.text[:len(num.text)-1], "0") + num.text[len(num.text)-1:] + ")"
		}
		set(v, true)
	default:
		return p.errorAt(tok, "expected a default value (NULL, a quoted string, a number or CURRENT_TIMESTAMP) after DEFAULT")
	}
	return nil
}
