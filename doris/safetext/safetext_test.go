package safetext_test

import (
	"testing"

	"github.com/doris-sink/doris-sink/doris/safetext"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text, é and 表", "plain text, é and 表"},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\a`},
		{"line\nforged: yes\r\n", `line\nforged: yes\r\n`},
		{"tab\there", `tab\there`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"del\x7f c1\u009b", `del\x7f c1\u009b`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"sep\u2028x", `sep\u2028x`},
	} {
		if got := safetext.Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
