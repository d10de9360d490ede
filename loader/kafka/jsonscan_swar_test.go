package kafka

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
)

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

// longStringCases put the bytes a string scan stops at on both sides of
// the first 64 bytes of a string, where jsontext.ScanString leaves its
// SWAR steps for bytes.IndexByte: every escape, a control
// character, a raw quote and the end of input at offsets of a 160-byte
// string.
func longStringCases() []string {
	var out []string
	for _, mid := range []string{`\"`, `\\`, `\/`, `\n`, `\u00e9`, `\u12G4`, `\x`, "\x01", "\x1f", "\x7f", "\x80", `"`, `\`, `é`} {
		for at := 0; at <= 160; at += 3 {
			s := strings.Repeat("a", at) + mid + strings.Repeat("b", 160-at)
			out = append(out, `{"k":"`+s+`"}`, `{"k":"`+s, `{"k":"`+s+`","x":1}`, `{"k":["`+s+`",2]}`)
		}
	}
	// Many escapes in one long string (the remembered quote and backslash).
	out = append(out, `{"k":"`+strings.Repeat(`abc\"def\\`, 40)+`"}`, `{"k":"`+strings.Repeat(`\n`, 300)+`"}`,
		`{"k":"`+strings.Repeat("x", 90)+`\`, `{"k":"`+strings.Repeat("x", 90)+`\u00`)
	return out
}

// TestLongStringsMatchCompact: isCompactObject agrees with json.Compact
// on long strings with a special byte at every offset.
func TestLongStringsMatchCompact(t *testing.T) {
	t.Parallel()
	for _, in := range longStringCases() {
		checkCompact(t, []byte(in))
	}
}

// TestNonDigit8MatchesBytewise: the word test marks exactly the bytes that
// are not ASCII digits, every byte value in every position, and random
// words.
func TestNonDigit8MatchesBytewise(t *testing.T) {
	t.Parallel()
	check := func(b []byte) {
		t.Helper()
		m := nonDigit8(binary.LittleEndian.Uint64(b))
		for i, c := range b {
			got := m>>(8*i+7)&1 == 1
			if want := c < '0' || c > '9'; got != want {
				t.Fatalf("nonDigit8(% x): byte %d (%#x) marked %v, want %v", b, i, c, got, want)
			}
		}
		want := 0
		for want < len(b) && b[want] >= '0' && b[want] <= '9' {
			want++
		}
		if n := digits(append(b, 'x'), 0); n != want {
			t.Fatalf("digits(% x) = %d, want %d", b, n, want)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'0', '9', '5', 0x2f, 0x3a, 0xb0, 0xff} {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[pos] = byte(c)
				check(b)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 8)
	for range 200000 {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		check(b)
	}
}
