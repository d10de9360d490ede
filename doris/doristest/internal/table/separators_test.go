package table

import (
	"errors"
	"testing"
)

// Separator.java convertSeparator / unescape (fe analysis/Separator.java),
// reached through StreamLoadTask.setColumnSeparator / setLineDelimiter.
func TestConvertSeparator_SeparatorJava(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`\t`, "\t"},
		{`\n`, "\n"},
		{`\r`, "\r"},
		{`\r\n`, "\r\n"},
		{`\\`, `\`},
		{`\'`, `'`},
		{`\"`, `"`},
		{`a\tb`, "a\tb"},
		{`\a`, `\a`}, // unknown escape kept as two characters
		{`|\`, `|\`}, // trailing lone backslash kept
		{`\`, `\`},   // a lone backslash is itself
		{`,`, `,`},   // plain text unchanged
		{`||`, `||`}, // multi-character separators allowed
		{`\x01`, "\x01"},
		{`\X01`, "\x01"},
		{`\x0A`, "\n"},
		{`\x0a`, "\n"},
		{`\x0102`, "\x01\x02"},   // one run
		{`\x01\x02`, "\x01\x02"}, // several escapes
		{`\x01\X0a`, "\x01\n"},   // mixed case
		{`\x7f`, "\x7f"},         // highest single-byte value
		{`\x80`, "\uff80"},       // Java (char) of a negative byte
		{`\xff`, "\uffff"},       //
		{`a\x01`, `a\x01`},       // hex only as a prefix; unescape keeps \x
	}
	for _, c := range cases {
		got, err := convertSeparator(c.in)
		if err != nil || got != c.want {
			t.Errorf("convertSeparator(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestConvertSeparator_HexErrors_SeparatorJava(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`\x`, "Hex str is empty"},
		{`\X\x`, "Hex str is empty"},
		{`\xZZ`, "Hex str format error"},
		{`\x0g`, "Hex str format error"},
		{`\x012`, "Hex str length error"},
		{`\x01\x2`, "Hex str length error"},
	}
	for _, c := range cases {
		_, err := convertSeparator(c.in)
		var e *Error
		if !errors.As(err, &e) || e.Msg != c.want || e.Code != "ANALYSIS_ERROR" || !e.FromFE {
			t.Errorf("convertSeparator(%q) err = %#v, want ANALYSIS_ERROR %q", c.in, err, c.want)
			continue
		}
		if want := "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = " + c.want; e.Message() != want {
			t.Errorf("Message() = %q, want %q", e.Message(), want)
		}
	}
}

// The Go SDK's default CSV sends line_delimiter `\n` (two characters) and
// doris-streamloader passes `--header column_separator:\t` through.
func TestCSVEscapedSeparators_SeparatorJava(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    []string
		body string
	}{
		{"escaped tab and newline", []string{"column_separator", `\t`, "line_delimiter", `\n`}, "1\ta\n2\tb\n"},
		{"escaped CRLF", []string{"column_separator", `,`, "line_delimiter", `\r\n`}, "1,a\r\n2,b\r\n"},
		{"hex SOH and LF", []string{"column_separator", `\x01`, "line_delimiter", `\x0A`}, "1\x01a\n2\x01b\n"},
		{"hex multi-byte line delimiter", []string{"column_separator", `\x01`, "line_delimiter", `\x0203`}, "1\x01a\x02\x032\x01b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := load(t, dupKV(t), hdr(c.h...), c.body)
			counts(t, b, 2, 0, 0)
		})
	}
	_, err := tryLoad(dupKV(t), hdr("column_separator", `\xZ1`), "1\ta\n")
	var e *Error
	if !errors.As(err, &e) || e.Msg != "Hex str format error" {
		t.Fatalf("bad hex: err = %v", err)
	}
}
