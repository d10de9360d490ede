package cmdutil

import (
	"strconv"
	"strings"
	"unicode"
)

// TerminalSafe returns s with every control character but newline
// (ESC and the other C0 and C1 codes, DEL, and invisible format runes such
// as bidi overrides) written as its Go escape (\x1b, \u202e): text that
// Doris or another server sent (a Stream Load Message or ErrorURL, a
// transaction's Reason, an error that quotes them) cannot move the cursor,
// rewrite the screen or hide itself when printed. Tables (Table, KV) and
// the CLI's error line use it.
func TerminalSafe(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar)
}
