package schema

import (
	"strings"
)

// tokKind is the kind of a DDL token.
type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // bare identifier or keyword
	tokQuoted         // `backtick-quoted identifier`
	tokString         // 'single' or "double" quoted string literal
	tokNumber         // unsigned integer or decimal literal
	tokSymbol         // one punctuation character
)

// token is one lexical unit of DDL. text is the identifier, the unescaped
// string value, the number or the symbol; pos is its byte offset.
type token struct {
	kind tokKind
	text string
	pos  int
}

// is reports whether t is the bare word kw (case-insensitive).
func (t token) is(kw string) bool {
	return t.kind == tokWord && strings.EqualFold(t.text, kw)
}

// isSym reports whether t is the symbol s.
func (t token) isSym(s string) bool { return t.kind == tokSymbol && t.text == s }

// lex splits src into tokens, dropping whitespace and comments (--, # and
// /* */). The last token is tokEOF.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(src[i:], "--")):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, newParseError(src, i, "unterminated comment /* ... */")
			}
			i += 2 + end + 2
		case c == '`':
			s, n, ok := scanBacktick(src[i:])
			if !ok {
				return nil, newParseError(src, i, "unterminated `quoted identifier`")
			}
			toks = append(toks, token{kind: tokQuoted, text: s, pos: i})
			i += n
		case c == '\'' || c == '"':
			s, n, ok := scanString(src[i:])
			if !ok {
				return nil, newParseError(src, i, "unterminated string literal")
			}
			toks = append(toks, token{kind: tokString, text: s, pos: i})
			i += n
		case isDigit(c):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if j+1 < len(src) && src[j] == '.' && isDigit(src[j+1]) {
				j++
				for j < len(src) && isDigit(src[j]) {
					j++
				}
			}
			if j < len(src) && isWordByte(src[j]) { // 1abc is an identifier
				for j < len(src) && isWordByte(src[j]) {
					j++
				}
				toks = append(toks, token{kind: tokWord, text: src[i:j], pos: i})
			} else {
				toks = append(toks, token{kind: tokNumber, text: src[i:j], pos: i})
			}
			i = j
		case isWordByte(c):
			j := i
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tokWord, text: src[i:j], pos: i})
			i = j
		default:
			toks = append(toks, token{kind: tokSymbol, text: string(c), pos: i})
			i++
		}
	}
	return append(toks, token{kind: tokEOF, pos: len(src)}), nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isWordByte reports whether c can be part of a bare identifier: ASCII
// letters, digits, '_', '$', and any byte of a multi-byte UTF-8 rune.
func isWordByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c >= 0x80
}

// scanBacktick reads a `quoted identifier` at the start of s ("“" is a
// literal backtick) and returns its value and length.
func scanBacktick(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '`' {
			if i+1 < len(s) && s[i+1] == '`' {
				b.WriteByte('`')
				i++
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(s[i])
	}
	return "", 0, false
}

// scanString reads a MySQL-style string literal at the start of s: quoted by
// ' or ", with a doubled quote or a backslash escape (\n \t \r \0 \b \Z; \%
// and \_ keep the backslash; \x is x otherwise). It returns the value and
// the literal's length.
func scanString(s string) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i++
				continue
			}
			return b.String(), i + 1, true
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'Z':
				b.WriteByte(0x1a)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// quoteString renders v as a string literal with quote q that scanString
// reads back as v.
func quoteString(v string, q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			// A backslash before % or _ is kept by scanString; escape every
			// backslash so "\%" round-trips as "\\%" → "\%".
			b.WriteString(`\\`)
		case q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		case '\b':
			b.WriteString(`\b`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// quoteIdent renders name as a `backtick-quoted identifier`.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
