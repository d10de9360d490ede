// Package safetext escapes control characters in text that came from
// outside (a Doris message or error body, a registry's error message, a
// Kafka record's bytes) before it enters an error, a log line or a
// dead-letter header: an ESC sequence there could drive the terminal that
// prints it, and a newline could forge a log line or split a header value.
// One function, Escape, used wherever such text enters an error.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every control character written as its Go escape:
// C0 codes including newline, carriage return and tab (\n, \x1b), DEL, C1
// codes, invisible format runes such as bidi overrides (\u202e), the line
// and paragraph separators, and each byte of invalid UTF-8 (\xff). Other
// text, including non-ASCII letters, is kept. s is returned as is when it
// holds none of these.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError
}
