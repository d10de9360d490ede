package jsontext

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// strPlain marks the bytes that may appear unescaped in a JSON string
// other than the closing quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// special8 returns a mask with the high bit set in every byte of x that is
// '"', '\\' or a control character (below 0x20), the bytes a string scan
// must stop at, read little-endian. Each part is the classic "has a zero
// byte" / "has a byte below n" word trick: a borrow only starts at a
// matching byte and only spreads to higher ones, so the lowest set bit is
// exactly the first special byte (higher bits may be false positives).
// The quote and the control characters share one test: x ^ 0x02 maps '"'
// (0x22) to 0x20 and the bytes below 0x20 onto themselves, and nothing
// else below 0x21, so "below 0x21 after the XOR" is exactly "quote or
// control character" (three operations fewer than testing them apart).
func special8(x uint64) uint64 {
	q := x ^ (lsb * 0x02)
	b := x ^ (lsb * '\\')
	return ((q-lsb*0x21)&^q | (b-lsb)&^b) & msb
}

// shortSteps is how many 16-byte SWAR steps ScanString takes before it
// treats a string as long (bytes.IndexByte's call costs more than a few
// steps on the short strings of 100-byte records).
const shortSteps = 4

// ScanString scans the JSON string literal whose opening quote is v[i]
// and returns the index after its closing quote, and whether it is one
// valid literal as encoding/json reads it: escapes checked, control
// characters refused, bytes >= 0x80 taken as they are (no UTF-8 check).
// On failure the index is where the scan stopped. Short strings (keys,
// most values) take a few SWAR steps of 16 bytes; a long one finds its
// next quote and backslash with bytes.IndexByte (vectorised) and checks
// the bytes before them for control characters without a branch per
// word.
func ScanString(v []byte, i int) (int, bool) {
	i++ // opening quote
	// q and bs are the next '"' and '\\' at or after i once looked up
	// (len(v) when there is none): a string with several escapes reuses
	// them instead of searching again.
	q, bs := -1, -1
	for {
		// Short strings (keys, most values) end within a few SWAR steps of
		// 16 bytes (two independent words each).
		for step := 0; i+16 <= len(v); step++ {
			w := v[i : i+16]
			m0 := special8(binary.LittleEndian.Uint64(w))
			m1 := special8(binary.LittleEndian.Uint64(w[8:]))
			if m0|m1 != 0 {
				if m0 != 0 {
					i += bits.TrailingZeros64(m0) >> 3
				} else {
					i += 8 + bits.TrailingZeros64(m1)>>3
				}
				goto special
			}
			i += 16
			if step < shortSteps-1 {
				continue
			}
			// A long string: find its next quote and backslash with
			// bytes.IndexByte (vectorised), and check the plain bytes before
			// them for control characters without a branch per word.
			if q < i {
				q = indexFrom(v, i, '"')
			}
			if bs < i {
				bs = indexFrom(v, i, '\\')
			}
			stop := min(q, bs)
			if hasControl(v[i:stop]) {
				return i, false
			}
			i = stop
			goto special
		}
		if i+8 <= len(v) {
			if m := special8(binary.LittleEndian.Uint64(v[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto special
			}
			i += 8
		}
		for i < len(v) && strPlain[v[i]] {
			i++
		}
	special:
		if i >= len(v) {
			return i, false
		}
		switch v[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(v) {
				return i, false
			}
			switch v[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(v) {
					return i, false
				}
				for _, h := range v[i+2 : i+6] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
}

// indexFrom is the index of the first c in v at or after i, len(v) when
// there is none.
func indexFrom(v []byte, i int, c byte) int {
	if j := bytes.IndexByte(v[i:], c); j >= 0 {
		return i + j
	}
	return len(v)
}

// hasControl reports whether b holds a byte below 0x20: a word's "has a
// byte below 0x20" bits are ORed over b, and a bit can only be set when
// some byte is below 0x20 (a borrow starts only there).
func hasControl(b []byte) bool {
	var acc uint64
	for len(b) >= 32 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		x2 := binary.LittleEndian.Uint64(b[16:])
		x3 := binary.LittleEndian.Uint64(b[24:])
		acc |= (x0-lsb*0x20)&^x0 | (x1-lsb*0x20)&^x1 | (x2-lsb*0x20)&^x2 | (x3-lsb*0x20)&^x3
		b = b[32:]
	}
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		acc |= (x - lsb*0x20) &^ x
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return acc&msb != 0
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
