package jsontext

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// Every byte alone and inside plain text of every length round-trips
// through encoding/json as the text itself (invalid UTF-8 as U+FFFD), and
// AppendValidString stops at exactly the invalid bytes.
func TestAppendStringEveryByte(t *testing.T) {
	t.Parallel()
	for c := 0; c < 256; c++ {
		for _, pad := range []int{0, 3, 8, 17, 40} {
			s := make([]byte, 0, 2*pad+1)
			for range pad {
				s = append(s, 'a')
			}
			s = append(s, byte(c))
			for range pad {
				s = append(s, 'b')
			}
			out := AppendString([]byte("x"), s)
			if out[0] != 'x' {
				t.Fatal("dst not kept")
			}
			var got string
			if err := json.Unmarshal(out[1:], &got); err != nil {
				t.Fatalf("byte %#x pad %d: %s is not JSON: %v", c, pad, out[1:], err)
			}
			want := string(s)
			if !utf8.Valid(s) {
				want = string([]rune(string(s))) // Go replaces each invalid byte by U+FFFD
			}
			if got != want {
				t.Fatalf("byte %#x pad %d: decoded %q, want %q", c, pad, got, want)
			}
			_, bad := AppendValidString(nil, s)
			if wantBad := -1; utf8.Valid(s) != (bad == wantBad) || (!utf8.Valid(s) && bad != pad) {
				t.Fatalf("byte %#x pad %d: bad = %d", c, pad, bad)
			}
		}
	}
}

func TestPlain8(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		for pos := range 8 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
			if got := Plain8(binary.LittleEndian.Uint64(w)); got != want {
				t.Fatalf("Plain8(%q) = %v, want %v", w, got, want)
			}
		}
	}
}

func TestAppendStringAllocs(t *testing.T) {
	s := []byte(`plain text with "quotes", a tab	and é`)
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { dst = AppendString(dst[:0], s) }); n != 0 {
		t.Errorf("AppendString allocates %v times", n)
	}
}
