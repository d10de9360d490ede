package jsontext

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecial8MatchesBytewise: the word test finds the same first special
// byte as a byte-by-byte check, for every byte value in every position
// and on random words (high bytes included, where borrows could mislead).
func TestSpecial8MatchesBytewise(t *testing.T) {
	t.Parallel()
	// ref is the index of the first special byte, 8 for none.
	ref := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return 8
	}
	check := func(b []byte) {
		t.Helper()
		got := 8
		if m := special8(binary.LittleEndian.Uint64(b)); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if want := ref(b); got != want {
			t.Fatalf("special8(% x): first special byte %d, want %d", b, got, want)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'a', 0x80, 0xff, 0x21, '"' + 1} {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[pos] = byte(c)
				check(b)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 8)
	for range 200000 {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		check(b)
	}
}

// TestHasControlMatchesBytewise: hasControl finds a byte below 0x20 at
// any position of any length (word, 32-byte block and tail paths).
func TestHasControlMatchesBytewise(t *testing.T) {
	t.Parallel()
	for n := range 80 {
		for pos := -1; pos < n; pos++ {
			for _, c := range []byte{0x00, 0x01, 0x1f, 0x20, 0x7f, 0x80, 0xff} {
				b := bytes.Repeat([]byte{'a'}, n)
				if pos >= 0 {
					b[pos] = c
				}
				want := pos >= 0 && c < 0x20
				if got := hasControl(b); got != want {
					t.Fatalf("hasControl(len %d, %#x at %d) = %v, want %v", n, c, pos, got, want)
				}
			}
		}
	}
}
