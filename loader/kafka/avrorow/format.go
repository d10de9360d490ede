package avrorow

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// safe marks the ASCII bytes a JSON string carries as they are.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special has the high bit of a byte set when w may hold a byte a JSON
// string cannot carry as is (a control character, '"', '\\', or ≥ 0x80);
// 0 means all 8 bytes are plain. (x - lsb) & ^x & msb is nonzero exactly
// when a byte of x is 0; with 0x20*lsb, when a byte is below 0x20.
func special(w uint64) uint64 {
	q, b := w^('"'*lsb), w^('\\'*lsb)
	return ((q-lsb)&^q | (b-lsb)&^b | (w-0x20*lsb)&^w | w) & msb
}

// plainPrefix returns how many leading bytes of s are plain, in whole
// 8-byte words (the caller finishes byte by byte).
func plainPrefix(s []byte) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		x := s[i : i+32]
		if special(binary.LittleEndian.Uint64(x))|special(binary.LittleEndian.Uint64(x[8:]))|
			special(binary.LittleEndian.Uint64(x[16:]))|special(binary.LittleEndian.Uint64(x[24:])) != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if special(binary.LittleEndian.Uint64(s[i:])) != 0 {
			break
		}
	}
	return i
}

// appendString writes s as a JSON string, like encoding/json without its
// HTML escaping: control characters escaped, invalid UTF-8 replaced by
// U+FFFD (Avro strings are UTF-8; Doris's JSON reader wants valid text).
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip plain bytes a word at a time (strings are most of a row's
		// bytes).
		i += plainPrefix(s[i:])
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendDecimal writes the two's-complement big-endian unscaled value b
// with n.scale as a JSON string of its exact digits ("-12.30"). A string,
// not a number: Doris casts the text to DECIMAL exactly, a JSON number
// could pass through a double. A value with more digits than the schema's
// precision is refused (the writer broke its own schema).
func appendDecimal(dst []byte, r *reader, start int, b []byte, n *node) ([]byte, error) {
	var digits []byte
	var neg bool
	var scratch [40]byte
	if len(b) <= 8 {
		var v int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			v = -1
		}
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		neg = v < 0
		u := uint64(v)
		if neg {
			u = -u
		}
		digits = strconv.AppendUint(scratch[:0], u, 10)
	} else { // wider than 64 bits: rare, allocates
		x := new(big.Int).SetBytes(b)
		if b[0]&0x80 != 0 {
			x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		neg = x.Sign() < 0
		digits = x.Abs(x).Append(scratch[:0], 10)
	}
	if n.precision > 0 && len(digits) > n.precision && !(len(digits) == 1 && digits[0] == '0') {
		r.pos = start
		return dst, r.fail(fmt.Errorf("decimal has %d digits, more than its precision %d", len(digits), n.precision))
	}
	dst = append(dst, '"')
	if neg {
		dst = append(dst, '-')
	}
	if n.scale <= 0 {
		dst = append(dst, digits...)
		return append(dst, '"'), nil
	}
	if len(digits) <= n.scale {
		dst = append(dst, '0', '.')
		for i := len(digits); i < n.scale; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
		return append(dst, '"'), nil
	}
	intLen := len(digits) - n.scale
	dst = append(dst, digits[:intLen]...)
	dst = append(dst, '.')
	dst = append(dst, digits[intLen:]...)
	return append(dst, '"'), nil
}
