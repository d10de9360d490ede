package cmdutil

import (
	"strings"

	"github.com/doris-sink/doris-sink/doris/safetext"
)

// TerminalSafe returns s with every control character but newline
// (ESC and the other C0 and C1 codes, DEL, and invisible format runes such
// as bidi overrides) written as its Go escape (\x1b, \u202e): text that
// Doris or another server sent (a Stream Load Message or ErrorURL, a
// transaction's Reason, an error that quotes them) cannot move the cursor,
// rewrite the screen or hide itself when printed. Tables (Table, KV) and
// the CLI's error line use it.
//
// It is safetext.Escape (the one escaping function, which the libraries
// apply where outside text enters an error) line by line.
func TerminalSafe(s string) string {
	if !strings.Contains(s, "\n") {
		return safetext.Escape(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = safetext.Escape(l)
	}
	return strings.Join(lines, "\n")
}
