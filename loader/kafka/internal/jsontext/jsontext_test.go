package jsontext

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
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

// TestPlain8: the word test says plain exactly when every byte is, for
// every byte value in every position beside several fills (the bytes
// next to a quote or a control byte, where a borrow could mislead), with
// a quote at every other position, and random words; PlainPrefix agrees.
func TestPlain8(t *testing.T) {
	t.Parallel()
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	check := func(w []byte) {
		t.Helper()
		want := true
		for _, c := range w {
			want = want && plain(c)
		}
		if got := Plain8(binary.LittleEndian.Uint64(w)); got != want {
			t.Fatalf("Plain8(% x) = %v, want %v", w, got, want)
		}
		n := 0
		for n < len(w) && plain(w[n]) {
			n++
		}
		long := bytes.Repeat(w, 5) // the 32-byte path, then one word
		wantPrefix := 0
		if n == 8 {
			wantPrefix = 40
		}
		if got := PlainPrefix(long); got != wantPrefix {
			t.Fatalf("PlainPrefix(% x ×5) = %d, want %d", w, got, wantPrefix)
		}
	}
	for c := range 256 {
		for pos := range 8 {
			for _, fill := range []byte{'a', 0x20, 0x21, 0x23, '\\' + 1, 0x7f} {
				w := bytes.Repeat([]byte{fill}, 8)
				w[pos] = byte(c)
				check(w)
				if fill != 'a' && fill != 0x21 {
					continue
				}
				for pos2 := range 8 {
					w2 := bytes.Clone(w)
					w2[pos2] = '"'
					check(w2)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	w := make([]byte, 8)
	for range 50000 {
		for i := range w {
			w[i] = byte(r.Uint32())
			if r.Uint32()%2 == 0 {
				w[i] &= 0x7f
			}
		}
		check(w)
	}
}

func TestAppendStringAllocs(t *testing.T) {
	s := []byte(`plain text with "quotes", a tab	and é`)
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { dst = AppendString(dst[:0], s) }); n != 0 {
		t.Errorf("AppendString allocates %v times", n)
	}
}
