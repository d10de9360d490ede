package protorow

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// quote returns s as a JSON string (used when building plans).
func quote(s string) []byte {
	b, _ := appendString(nil, []byte(s), false)
	return b
}

// appendString appends s as a JSON string. With validate, invalid UTF-8
// stops it and bad is the offset of the first invalid byte in s; otherwise
// invalid bytes become U+FFFD and bad is -1.
func appendString(dst, s []byte, validate bool) (out []byte, bad int) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip plain ASCII 32 (four independent words per branch, as
		// avrorow's plainPrefix), then 8 bytes at a time.
		for i+32 <= len(s) {
			x := s[i : i+32]
			if special8(binary.LittleEndian.Uint64(x))|special8(binary.LittleEndian.Uint64(x[8:]))|
				special8(binary.LittleEndian.Uint64(x[16:]))|special8(binary.LittleEndian.Uint64(x[24:])) != 0 {
				break
			}
			i += 32
		}
		for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
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
			if validate {
				return dst, i
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), -1
}

// appendBytes appends b as a JSON string in standard base64 with padding
// (protojson's encoding of bytes).
func appendBytes(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendFloat appends f the way encoding/json does (shortest repr that
// round-trips at the given bit size, exponent form outside [1e-6, 1e21)).
// NaN and ±Inf have no JSON number: they are written as the strings "NaN",
// "Infinity" and "-Infinity", which Doris parses into FLOAT/DOUBLE columns:
// a JSON value for a number column is parsed from its text
// (be/src/vec/data_types/serde/data_type_number_serde.cpp
// deserialize_one_cell_from_json; be/src/util/string_parser.hpp
// string_to_float_internal hands it to fast_float::from_chars, which
// accepts nan/inf/infinity in any case).
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// plain8 reports whether the 8 bytes of w are all printable ASCII other
// than '"' and '\\' (bytes a JSON string holds as they are).
func plain8(w uint64) bool { return special8(w) == 0 }

// special8 is non-zero when a byte of w is not plain (see plain8).
func special8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	ctl := (w - 0x20*ones) &^ w // a byte < 0x20 (or >= 0x80) sets its high bit
	q := w ^ ('"' * ones)       // zero where a byte is '"'
	bs := w ^ ('\\' * ones)     // zero where a byte is '\\'
	zq := (q - ones) &^ q       // high bit set where q has a zero byte
	zb := (bs - ones) &^ bs
	return (w | ctl | zq | zb) & highs
}
