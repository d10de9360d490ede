package schema

import (
	"strconv"
	"strings"
)

// Doris defaults applied by ParseCreateTable.
const (
	// DefaultBuckets is the bucket count of DISTRIBUTED BY ... without
	// BUCKETS (FE FeConstants.default_bucket_num).
	DefaultBuckets = 10
	// TypeCommentOLAP is the table comment SHOW CREATE TABLE prints for a
	// table created without one; ParseCreateTable reads it as "".
	TypeCommentOLAP = "OLAP"
)

// CreateTableStmt is a parsed CREATE TABLE statement.
type CreateTableStmt struct {
	Table       *Table
	IfNotExists bool
}

// ParseCreateTable parses a Doris CREATE TABLE statement: the DDL a user
// writes and the text SHOW CREATE TABLE prints. It checks syntax only; call
// (*Table).Validate for Doris's semantic rules. Errors are *ParseError.
// See ParseCreateTableStmt for what is accepted.
func ParseCreateTable(ddl string) (*Table, error) {
	st, err := ParseCreateTableStmt(ddl)
	if err != nil {
		return nil, err
	}
	return st.Table, nil
}

// ParseCreateTableStmt parses one CREATE TABLE statement (an optional
// trailing ";" is allowed) and reports IF NOT EXISTS too.
//
// Accepted, case-insensitively, with -- # and /* */ comments anywhere:
//
//	CREATE TABLE [IF NOT EXISTS] [db.]name (
//	  col type [KEY] [agg] [NULL|NOT NULL] [AUTO_INCREMENT[(n)]]
//	      [DEFAULT NULL|'s'|"s"|number|CURRENT_TIMESTAMP[(n)]|CURRENT_DATE|PI|E|BITMAP_EMPTY]
//	      [ON UPDATE CURRENT_TIMESTAMP[(n)]] [COMMENT 's'],   (attributes in any order)
//	  INDEX ... ,                                          (skipped)
//	  ...)
//	[ENGINE [=] OLAP] [DUPLICATE|UNIQUE|AGGREGATE KEY(cols)] [COMMENT 's']
//	[[AUTO] PARTITION BY ... (...) [(...)]]                (skipped)
//	[DISTRIBUTED BY HASH(cols)|RANDOM [BUCKETS n|AUTO]]
//	[ROLLUP (...)] [ORDER BY (...)]                        (skipped)
//	[PROPERTIES ("k" = "v", ...)]
//
// Defaults, following Doris:
//   - A column without NULL / NOT NULL is nullable (Doris ≥ 2.0).
//   - Without a key clause: if some column has an aggregation the table is
//     AGGREGATE KEY on every column without one; otherwise DUPLICATE KEY on
//     the leading columns Doris picks for the short key (at most 3 columns,
//     at most 36 bytes of index, stopping before FLOAT/DOUBLE/STRING/JSON/
//     complex types and after the first VARCHAR), or no key columns when
//     property "enable_duplicate_without_keys_by_default" is "true".
//   - Without BUCKETS: DefaultBuckets. BUCKETS AUTO is Buckets == 0.
//   - Without DISTRIBUTED BY (UNVERIFIED choice): HASH on the key columns
//     for UNIQUE/AGGREGATE tables, RANDOM for DUPLICATE tables, BUCKETS AUTO.
//   - COMMENT 'OLAP' on the table reads as "" (Doris prints the table type
//     when the comment is empty). DEFAULT NULL reads as no default.
//
// Not kept: partitions, indexes, rollups, AUTO_INCREMENT, ON UPDATE, KEY
// markers on columns; ENGINE other than OLAP is an error.
func ParseCreateTableStmt(ddl string) (*CreateTableStmt, error) {
	toks, err := lex(ddl)
	if err != nil {
		return nil, err
	}
	p := &parser{src: ddl, toks: toks}
	return p.createTable()
}

// parser is a recursive-descent parser over the token list.
type parser struct {
	src  string
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptSym(s string) bool {
	if p.peek().isSym(s) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(kw, context string) error {
	if !p.accept(kw) {
		return p.errorf("expected %s %s", kw, context)
	}
	return nil
}

func (p *parser) expectSym(s, context string) error {
	if !p.acceptSym(s) {
		return p.errorf("expected %q %s", s, context)
	}
	return nil
}

// errorf reports an error at the next token.
func (p *parser) errorf(format string, args ...any) error {
	return p.errorAt(p.peek(), format, args...)
}

func (p *parser) errorAt(t token, format string, args ...any) error {
	return newParseError(p.src, t.pos, format, args...)
}

// ident reads an identifier: a bare word or a `quoted` one.
func (p *parser) ident(what string) (string, error) {
	t := p.peek()
	if (t.kind == tokWord || t.kind == tokQuoted) && t.text != "" {
		p.i++
		return t.text, nil
	}
	return "", p.errorf("expected %s", what)
}

// stringLit reads a quoted string literal.
func (p *parser) stringLit(what string) (string, error) {
	t := p.peek()
	if t.kind != tokString {
		return "", p.errorf("expected %s as a quoted string", what)
	}
	p.i++
	return t.text, nil
}

// identList reads "(" ident {"," ident} ")".
func (p *parser) identList(what string) ([]string, error) {
	if err := p.expectSym("(", "before the "+what+" list"); err != nil {
		return nil, err
	}
	var out []string
	for {
		name, err := p.ident("a column name in the " + what + " list")
		if err != nil {
			return nil, err
		}
		out = append(out, name)
		if !p.acceptSym(",") {
			break
		}
	}
	return out, p.expectSym(")", "to close the "+what+" list")
}

// skipParens skips one balanced "(...)" group starting at the next token.
// "[" opens and "]" closes too, and any closer matches any opener, because
// range partitions are written [("a"), ("b")).
func (p *parser) skipParens(what string) error {
	if err := p.expectSym("(", what); err != nil {
		return err
	}
	for depth := 1; depth > 0; {
		t := p.next()
		switch {
		case t.kind == tokEOF:
			return p.errorAt(t, "unbalanced parentheses %s", what)
		case t.isSym("(") || t.isSym("["):
			depth++
		case t.isSym(")") || t.isSym("]"):
			depth--
		}
	}
	return nil
}

func (p *parser) createTable() (*CreateTableStmt, error) {
	if err := p.expect("CREATE", "at the start of the statement"); err != nil {
		return nil, err
	}
	if err := p.expect("TABLE", "after CREATE (only CREATE TABLE is supported)"); err != nil {
		return nil, err
	}
	st := &CreateTableStmt{Table: &Table{Properties: map[string]string{}}}
	t := st.Table
	if p.accept("IF") {
		if err := p.expect("NOT", "after IF"); err != nil {
			return nil, err
		}
		if err := p.expect("EXISTS", "after IF NOT"); err != nil {
			return nil, err
		}
		st.IfNotExists = true
	}
	name, err := p.ident("a table name")
	if err != nil {
		return nil, err
	}
	if p.acceptSym(".") {
		t.Database = name
		if name, err = p.ident("a table name after the database name"); err != nil {
			return nil, err
		}
	}
	t.Name = name
	if err := p.columnList(t); err != nil {
		return nil, err
	}
	explicitKeys, explicitDist := false, false
	seen := map[string]bool{}
	once := func(clause string, tok token) error {
		if seen[clause] {
			return p.errorAt(tok, "duplicate %s clause", clause)
		}
		seen[clause] = true
		return nil
	}
	for {
		tok := p.peek()
		switch {
		case tok.kind == tokEOF:
		case tok.isSym(";"):
			p.i++
			if p.peek().kind != tokEOF {
				return nil, p.errorf("expected end of statement after \";\" (one statement only)")
			}
		case tok.is("ENGINE"):
			if err := once("ENGINE", tok); err != nil {
				return nil, err
			}
			p.i++
			p.acceptSym("=")
			eng, err := p.ident("an engine name after ENGINE")
			if err != nil {
				return nil, err
			}
			if !strings.EqualFold(eng, "OLAP") {
				return nil, p.errorAt(p.toks[p.i-1], "only ENGINE=OLAP is supported, got %s", eng)
			}
			continue
		case tok.is("DUPLICATE") || tok.is("UNIQUE") || tok.is("AGGREGATE"):
			if err := once("KEY", tok); err != nil {
				return nil, err
			}
			p.i++
			if err := p.expect("KEY", "after "+strings.ToUpper(tok.text)); err != nil {
				return nil, err
			}
			cols, err := p.identList("key")
			if err != nil {
				return nil, err
			}
			t.Keys, t.KeyColumns, explicitKeys = KeysType(strings.ToUpper(tok.text)), cols, true
			continue
		case tok.is("COMMENT"):
			if err := once("COMMENT", tok); err != nil {
				return nil, err
			}
			p.i++
			c, err := p.stringLit("the table comment")
			if err != nil {
				return nil, err
			}
			if c == TypeCommentOLAP {
				c = ""
			}
			t.Comment = c
			continue
		case tok.is("AUTO") || tok.is("PARTITION"):
			if err := once("PARTITION", tok); err != nil {
				return nil, err
			}
			p.i++
			if tok.is("AUTO") {
				if err := p.expect("PARTITION", "after AUTO"); err != nil {
					return nil, err
				}
			}
			if err := p.expect("BY", "after PARTITION"); err != nil {
				return nil, err
			}
			if _, err := p.ident("RANGE or LIST after PARTITION BY"); err != nil {
				return nil, err
			}
			if err := p.skipParens("after PARTITION BY RANGE/LIST"); err != nil {
				return nil, err
			}
			if p.peek().isSym("(") {
				if err := p.skipParens("in the partition list"); err != nil {
					return nil, err
				}
			}
			continue
		case tok.is("DISTRIBUTED"):
			if err := once("DISTRIBUTED", tok); err != nil {
				return nil, err
			}
			p.i++
			if err := p.distribution(t); err != nil {
				return nil, err
			}
			explicitDist = true
			continue
		case tok.is("ROLLUP"):
			if err := once("ROLLUP", tok); err != nil {
				return nil, err
			}
			p.i++
			if err := p.skipParens("after ROLLUP"); err != nil {
				return nil, err
			}
			continue
		case tok.is("ORDER"):
			if err := once("ORDER BY", tok); err != nil {
				return nil, err
			}
			p.i++
			if err := p.expect("BY", "after ORDER"); err != nil {
				return nil, err
			}
			if err := p.skipParens("after ORDER BY"); err != nil {
				return nil, err
			}
			continue
		case tok.is("PROPERTIES"):
			if err := once("PROPERTIES", tok); err != nil {
				return nil, err
			}
			p.i++
			if err := p.properties(t.Properties); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, p.errorf("expected ENGINE, DUPLICATE/UNIQUE/AGGREGATE KEY, COMMENT, PARTITION BY, DISTRIBUTED BY, PROPERTIES or end of statement")
		}
		break
	}
	if !explicitKeys {
		inferKeys(t)
	}
	if !explicitDist {
		t.Buckets = 0
		if t.Keys != DuplicateKeys {
			t.DistributedBy = append([]string(nil), t.KeyColumns...)
		}
	}
	return st, nil
}

func (p *parser) distribution(t *Table) error {
	if err := p.expect("BY", "after DISTRIBUTED"); err != nil {
		return err
	}
	switch {
	case p.accept("HASH"):
		cols, err := p.identList("distribution")
		if err != nil {
			return err
		}
		t.DistributedBy = cols
	case p.accept("RANDOM"):
		t.DistributedBy = nil
	default:
		return p.errorf("expected HASH(...) or RANDOM after DISTRIBUTED BY")
	}
	t.Buckets = DefaultBuckets
	if !p.accept("BUCKETS") {
		return nil
	}
	if p.accept("AUTO") {
		t.Buckets = 0
		return nil
	}
	num := p.peek()
	if num.kind != tokNumber || strings.Contains(num.text, ".") {
		return p.errorf("expected a bucket count or AUTO after BUCKETS")
	}
	n, err := strconv.ParseInt(num.text, 10, 32)
	if err != nil || n <= 0 {
		return p.errorf("Number of hash distribution should be greater than zero.")
	}
	p.i++
	t.Buckets = int(n)
	return nil
}

func (p *parser) properties(props map[string]string) error {
	if err := p.expectSym("(", "after PROPERTIES"); err != nil {
		return err
	}
	if p.acceptSym(")") {
		return nil
	}
	for {
		k, err := p.stringLit("a property name")
		if err != nil {
			return err
		}
		if err := p.expectSym("=", "after property name "+strconv.Quote(k)); err != nil {
			return err
		}
		v, err := p.stringLit("the value of property " + strconv.Quote(k))
		if err != nil {
			return err
		}
		props[k] = v
		if !p.acceptSym(",") {
			break
		}
	}
	return p.expectSym(")", "to close PROPERTIES")
}
