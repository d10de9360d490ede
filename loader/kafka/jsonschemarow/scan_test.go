package jsonschemarow

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

// TestPlain8: the 8-byte fast path says yes exactly when no byte is '"',
// '\' or a control byte.
func TestPlain8(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		for pos := range 8 {
			w := []byte("aaaaaaaa")
			w[pos] = byte(c)
			want := c >= 0x20 && c != '"' && c != '\\'
			if got := plain8(binary.LittleEndian.Uint64(w)); got != want {
				t.Fatalf("plain8(%q) = %v, want %v", w, got, want)
			}
		}
	}
}

// TestCompactValid: the one-pass scanner agrees with json.Valid and
// json.Compact.
func TestCompactValid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{}`, `[]`, `0`, `-0`, `-0.5e+10`, `1E5`, `01`, `1.`, `.5`, `1e`, `-`, `tru`, `nul`, `"x`, `"\x"`, `"\u12G4"`,
		"\"\x01\"", `{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `{"a":1}{}`, ` { "a" : [ 1 , 2 ] } `, `"é\u00e9\/"`,
		"\"a\xffb\"", `[[[]]]`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), `{"k":"0123456789abcdef\"0123456789"}`,
	} {
		var want bytes.Buffer
		wantOK := json.Compact(&want, []byte(in)) == nil
		got, ok := compactValid(nil, []byte(in), true)
		if ok != wantOK || ok && !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%.40q: %q %v, want %q %v", in, got, ok, want.Bytes(), wantOK)
		}
	}
}
