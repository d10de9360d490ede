package kafka

import (
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

// BenchmarkConvertJSONCompact100 is the fast path on a 100 B record like
// the bench command's (short keys and values: the per-string cost).
func BenchmarkConvertJSONCompact100(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatJSON})
	r := rec(`{"id":123456,"ts":1760000123456,"customer":"c-456","amount":23456.25,"note":"0123456789abcdef01"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
}
