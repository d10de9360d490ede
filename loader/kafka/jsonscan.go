package kafka

import (
	"encoding/binary"
	"math/bits"

	"github.com/doris-sink/doris-sink/loader/kafka/internal/jsontext"
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
		return jsontext.ScanString(v, i)
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
		if i, ok = jsontext.ScanString(v, i); !ok {
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
