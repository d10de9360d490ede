package mysqlfront

import (
	"strings"
)

// tokKind classifies a token of a statement.
type tokKind int

const (
	tokWord   tokKind = iota // keyword or bare identifier
	tokQuoted                // `identifier`
	tokString                // 'text' or "text" (val is unescaped)
	tokNumber                // 123, 1.5
	tokVar                   // @@name, @@session.name, @name (val is the text after the @s)
	tokParam                 // ?
	tokPunct                 // any other single character: ( ) , . = ; * < > ...
)

// token is one lexical unit. start/end index the original statement text.
type token struct {
	kind       tokKind
	val        string
	start, end int
}

// is reports whether t is the bare word w (case-insensitive).
func (t token) is(w string) bool { return t.kind == tokWord && strings.EqualFold(t.val, w) }

// isPunct reports whether t is the punctuation p.
func (t token) isPunct(p string) bool { return t.kind == tokPunct && t.val == p }

// isUserVar reports whether t is a user variable (@name, not @@name).
func (t token) isUserVar() bool { return t.kind == tokVar && t.end-t.start-len(t.val) == 1 }

// name returns the identifier value of a word or quoted identifier, or "".
func (t token) name() string {
	if t.kind == tokWord || t.kind == tokQuoted {
		return t.val
	}
	return ""
}

// lex splits a statement into tokens, dropping comments (`-- `, `#`, `/* */`)
// and whitespace. Unterminated quotes or comments run to the end of input.
func lex(s string) []token {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(s[i:], "--") && (i+2 == len(s) || isSpace(s[i+2]))):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				i = len(s)
			} else {
				i += j + 4
			}
		case c == '\'' || c == '"':
			val, end := lexString(s, i)
			toks = append(toks, token{kind: tokString, val: val, start: i, end: end})
			i = end
		case c == '`':
			var b strings.Builder
			j := i + 1
			for j < len(s) {
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			toks = append(toks, token{kind: tokQuoted, val: b.String(), start: i, end: j})
			i = j
		case c == '@':
			j := i
			for j < len(s) && s[j] == '@' {
				j++
			}
			k := j
			for k < len(s) && (isWordByte(s[k]) || s[k] == '.') {
				k++
			}
			toks = append(toks, token{kind: tokVar, val: s[j:k], start: i, end: k})
			i = k
		case c == '?':
			toks = append(toks, token{kind: tokParam, val: "?", start: i, end: i + 1})
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			if j < len(s) && isWordByte(s[j]) { // identifiers may start with digits
				for j < len(s) && isWordByte(s[j]) {
					j++
				}
				toks = append(toks, token{kind: tokWord, val: s[i:j], start: i, end: j})
			} else {
				toks = append(toks, token{kind: tokNumber, val: s[i:j], start: i, end: j})
			}
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tokWord, val: s[i:j], start: i, end: j})
			i = j
		default:
			toks = append(toks, token{kind: tokPunct, val: s[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	return toks
}

// lexString reads a quoted string starting at s[i] and returns its value and
// the index after the closing quote. Doubled quotes and backslash escapes are
// decoded as MySQL does.
func lexString(s string, i int) (string, int) {
	q := s[i]
	var b strings.Builder
	j := i + 1
	for j < len(s) {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s):
			b.WriteByte(unescape(s[j+1]))
			j += 2
		case c == q && j+1 < len(s) && s[j+1] == q:
			b.WriteByte(q)
			j += 2
		case c == q:
			return b.String(), j + 1
		default:
			b.WriteByte(c)
			j++
		}
	}
	return b.String(), j
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case '0':
		return 0
	case 'Z':
		return 26
	}
	return c
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// trimStatement drops trailing semicolons and surrounding whitespace and
// comments, returning the statement text and its tokens.
func trimStatement(q string) (string, []token) {
	toks := lex(q)
	for len(toks) > 0 && toks[len(toks)-1].isPunct(";") {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return "", nil
	}
	start, end := toks[0].start, toks[len(toks)-1].end
	text := q[start:end]
	for i := range toks {
		toks[i].start -= start
		toks[i].end -= start
	}
	return text, toks
}
