package table

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// refCountLines is the parsing path's rule, written plainly: a record is a
// line between delimiters; empty lines (for JSON, white-space-only lines)
// are not records.
func refCountLines(body string, d byte, json bool) int64 {
	var n int64
	for _, line := range strings.Split(body, string(d)) {
		if json {
			line = strings.TrimSpace(line)
		}
		if line != "" {
			n++
		}
	}
	return n
}

// The block counter of counting mode must agree with the line rule whatever
// the block boundaries (one-byte reads split every line).
func TestCountLinesMatchesLineRule(t *testing.T) {
	t.Parallel()
	bodies := []string{"", "\n", "a", "a\n", "a\nb", "\n\na\n\n\nb\n", " \n {\"k\":1}\n\t\n{\"k\":2}", "x|y||z|", strings.Repeat("{\"k\":1}\n", 70000)}
	for _, body := range bodies {
		for _, json := range []bool{false, true} {
			for _, d := range []byte{'\n', '|'} {
				want := refCountLines(body, d, json)
				for _, oneByte := range []bool{false, true} {
					var r = bytes.NewReader([]byte(body))
					got, err := countLines(r, string(d), json)
					if oneByte {
						got, err = countLines(iotest.OneByteReader(bytes.NewReader([]byte(body))), string(d), json)
					}
					if err != nil || got != want {
						t.Errorf("countLines(%.20q, %q, json=%v, oneByte=%v) = %d, %v; want %d", body, d, json, oneByte, got, err, want)
					}
				}
			}
		}
	}
}

func FuzzCountLines(f *testing.F) {
	f.Add("a\n\nb\n", true, false)
	f.Add(" \n{}\n", false, true)
	f.Add("\u2005\n\u2005x", true, true)
	f.Fuzz(func(t *testing.T, body string, json, oneByte bool) {
		var r io.Reader = strings.NewReader(body)
		if oneByte {
			r = iotest.OneByteReader(r) // every block boundary splits a rune or a line
		}
		got, err := countLines(r, "\n", json)
		if want := refCountLines(body, '\n', json); err != nil || got != want {
			t.Fatalf("countLines(%q, json=%v) = %d, %v; want %d", body, json, got, err, want)
		}
	})
}
