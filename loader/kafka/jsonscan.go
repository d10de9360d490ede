package kafka

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// isCompactObject reports whether v is exactly one valid JSON object with
// no insignificant whitespace anywhere, that is, whether json.Compact
// would return v unchanged and without error. It is the fast path of
// convertJSON: encoding/json's state-machine scanner costs about two
// thirds of the sink's CPU on 1 KiB JSON records (docs/performance.md),
// and most producers already write compact JSON. A false answer only
// means "take the slow path" (json.Compact decides validity and errors).
// It accepts what encoding/json accepts: strings are not checked for
// valid UTF-8, nesting is limited to the same depth.
func isCompactObject(v []byte) bool {
	if len(v) < 2 || v[0] != '{' {
		return false
	}
	i, ok := scanValue(v, 0, 0)
	return ok && i == len(v)
}

// maxScanDepth is encoding/json's nesting limit.
const maxScanDepth = 10000

// strPlain marks the bytes that may appear unescaped in a JSON string
// other than the closing quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanValue scans the compact value starting at v[i] and returns the index
// after it.
func scanValue(v []byte, i, depth int) (int, bool) {
	if i >= len(v) {
		return i, false
	}
	switch c := v[i]; {
	case c == '{':
		return scanObject(v, i, depth+1)
	case c == '[':
		return scanArray(v, i, depth+1)
	case c == '"':
		return scanString(v, i)
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(v, i)
	case c == 't':
		return scanLiteral(v, i, "true")
	case c == 'f':
		return scanLiteral(v, i, "false")
	case c == 'n':
		return scanLiteral(v, i, "null")
	}
	return i, false
}

func scanObject(v []byte, i, depth int) (int, bool) {
	if depth > maxScanDepth {
		return i, false
	}
	i++ // '{'
	if i < len(v) && v[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(v) || v[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = scanString(v, i); !ok {
			return i, false
		}
		if i >= len(v) || v[i] != ':' {
			return i, false
		}
		if i, ok = scanValue(v, i+1, depth); !ok {
			return i, false
		}
		if i >= len(v) {
			return i, false
		}
		switch v[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func scanArray(v []byte, i, depth int) (int, bool) {
	if depth > maxScanDepth {
		return i, false
	}
	i++ // '['
	if i < len(v) && v[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = scanValue(v, i, depth); !ok {
			return i, false
		}
		if i >= len(v) {
			return i, false
		}
		switch v[i] {
		case ',':
			i++
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// SWAR constants: one in every byte, and every byte's high bit.
const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

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
	q := x ^ (lsb8 * 0x02)
	b := x ^ (lsb8 * '\\')
	return ((q-lsb8*0x21)&^q | (b-lsb8)&^b) & msb8
}

// shortSteps is how many 16-byte SWAR steps scanString takes before it
// treats a string as long (bytes.IndexByte's call costs more than a few
// steps on the short strings of 100-byte records).
const shortSteps = 4

func scanString(v []byte, i int) (int, bool) {
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
		acc |= (x0-lsb8*0x20)&^x0 | (x1-lsb8*0x20)&^x1 | (x2-lsb8*0x20)&^x2 | (x3-lsb8*0x20)&^x3
		b = b[32:]
	}
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		acc |= (x - lsb8*0x20) &^ x
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return acc&msb8 != 0
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func scanNumber(v []byte, i int) (int, bool) {
	if v[i] == '-' {
		i++
	}
	switch {
	case i >= len(v):
		return i, false
	case v[i] == '0':
		i++
	case v[i] >= '1' && v[i] <= '9':
		i = digits(v, i+1)
	default:
		return i, false
	}
	if i < len(v) && v[i] == '.' {
		j := digits(v, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := digits(v, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// digits returns the index of the first byte at or after v[i] that is not
// an ASCII digit, 8 bytes at a time while 8 remain (a timestamp in
// milliseconds is 13 digits).
func digits(v []byte, i int) int {
	for i+8 <= len(v) {
		if m := nonDigit8(binary.LittleEndian.Uint64(v[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return i
}

// nonDigit8 returns a mask with the high bit set in every byte of x that
// is not '0'..'9'. Each byte is tested on its own (no borrow or carry
// crosses bytes): with the high bit forced on, subtracting 0x30 leaves it
// set exactly when the low seven bits are ≥ 0x30; with it forced off,
// adding 0x46 sets it exactly when they are ≥ 0x3A; x's own high bit
// marks bytes ≥ 0x80.
func nonDigit8(x uint64) uint64 {
	ge30 := (x | msb8) - lsb8*0x30
	ge3a := (x &^ msb8) + lsb8*0x46
	return (^ge30 | ge3a | x) & msb8
}

func scanLiteral(v []byte, i int, lit string) (int, bool) {
	if len(v)-i < len(lit) || string(v[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}
