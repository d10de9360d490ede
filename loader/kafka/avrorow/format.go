package avrorow

import (
	"fmt"
	"github.com/doris-sink/doris-sink/loader/kafka/internal/jsontext"
	"math/big"
	"strconv"
)

// safe marks the ASCII bytes a JSON string carries as they are.

// appendString appends s as a JSON string (jsontext.AppendString):
// control characters escaped, invalid UTF-8 replaced by U+FFFD (Avro
// strings are UTF-8; Doris's JSON reader wants valid text).
func appendString(dst, s []byte) []byte { return jsontext.AppendString(dst, s) }

// appendDecimal writes the two's-complement big-endian unscaled value b
// with n.scale as a JSON string of its exact digits ("-12.30"). A string,
// not a number: Doris casts the text to DECIMAL exactly, a JSON number
// could pass through a double. A value with more digits than the schema's
// precision is refused (the writer broke its own schema).
func appendDecimal(dst []byte, r *reader, start int, b []byte, n *node) ([]byte, error) {
	var digits []byte
	var neg bool
	var scratch [40]byte
	// Past its redundant sign bytes, a value of precision p has at most
	// p/2+2 bytes (k bytes hold at least (8k-9)·log10(2) > p digits
	// beyond that): a longer one fails before its digits are made, which
	// for a hostile 1 MiB decimal cost seconds of CPU (issue 25).
	for len(b) > 1 && (b[0] == 0 && b[1]&0x80 == 0 || b[0] == 0xff && b[1]&0x80 != 0) {
		b = b[1:]
	}
	if n.precision > 0 && len(b) > n.precision/2+2 {
		r.pos = start
		return dst, r.fail(fmt.Errorf("decimal of %d bytes has more digits than its precision %d", len(b), n.precision))
	}
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
