// Package jsontext writes and scans JSON string literals: AppendString
// is the one escaper of text going into a Stream Load JSON body (the
// record decoders loader/kafka/avrorow and loader/kafka/protorow), and
// ScanString the one validating scan of a JSON string (loader/kafka's
// compact-JSON fast path, loader/kafka/jsonschemarow). Both are fast on
// plain text (words of 8 bytes, bytes.IndexByte on long strings) and
// allocation-free.
package jsontext

import (
	"encoding/binary"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special has the high bit of a byte set when w may hold a byte a JSON
// string cannot carry as is (a control character, '"', '\\', or >= 0x80);
// 0 means all 8 bytes are plain.
func special(w uint64) uint64 { return specialBits(w) & msb }

// specialBits is special before the mask, so that a loop can OR several
// words and mask once. (x - lsb) &^ x & msb is nonzero exactly when a
// byte of x is 0, (x - n*lsb) &^ x & msb when a byte is below n (a borrow
// starts only at such a byte). The quote and the control characters share
// one test: w ^ 0x02 maps '"' (0x22) to 0x20 and the bytes below 0x20
// onto themselves, and nothing else below 0x21. w itself marks the bytes
// >= 0x80.
func specialBits(w uint64) uint64 {
	q, b := w^(0x02*lsb), w^('\\'*lsb)
	return (q-0x21*lsb)&^q | (b-lsb)&^b | w
}

// Plain8 reports whether the 8 bytes of w are all printable ASCII other
// than '"' and '\\' (bytes a JSON string carries as they are).
func Plain8(w uint64) bool { return special(w) == 0 }

// PlainPrefix returns how many leading bytes of s are plain, in whole
// words of 8 (the caller handles the rest byte by byte).
func PlainPrefix(s []byte) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		x := s[i : i+32]
		if (specialBits(binary.LittleEndian.Uint64(x))|specialBits(binary.LittleEndian.Uint64(x[8:]))|
			specialBits(binary.LittleEndian.Uint64(x[16:]))|specialBits(binary.LittleEndian.Uint64(x[24:])))&msb != 0 {
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

// AppendString appends s as a JSON string without HTML escaping: control
// characters escaped, invalid UTF-8 replaced by U+FFFD (Doris's JSON
// reader wants valid text).
func AppendString(dst, s []byte) []byte {
	dst, _ = appendString(dst, s, false)
	return dst
}

// AppendValidString is AppendString refusing invalid UTF-8: it stops at
// the first invalid byte and returns its offset in s as bad (-1 when s is
// valid; dst is then complete).
func AppendValidString(dst, s []byte) (out []byte, bad int) {
	return appendString(dst, s, true)
}

func appendString(dst, s []byte, validate bool) ([]byte, int) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i += PlainPrefix(s[i:])
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
