package kafka

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// The value-text checks of the row pre-check (precheck.go): what Doris's
// string parsers accept, decided without allocating.

// Outcomes of the number-text checks.
const (
	textOK = iota
	textBad
	textOutOfRange
	textUnsure // a form the check does not decide (exponent, …): passed
)

// trimSpace trims ASCII blanks (Doris's string parsers skip them).
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// intText checks integer text against [lo, hi] (lo == hi == 0: no range).
// Doris's StringParser (be/src/util/string_parser.hpp, string_to_int)
// accepts digits with an optional sign and a fractional part it drops;
// anything else, an exponent too, fails to parse.
func intText(b []byte, lo, hi int64) int {
	b = trimSpace(b)
	if len(b) == 0 {
		return textBad
	}
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		b = b[1:]
	}
	intPart := b
	if k := bytes.IndexByte(b, '.'); k >= 0 {
		intPart = b[:k]
		for _, c := range b[k+1:] {
			if c < '0' || c > '9' {
				return textBad
			}
		}
	}
	if len(intPart) == 0 && len(b) <= 1 {
		return textBad
	}
	var n uint64
	over := false
	for _, c := range intPart {
		if c < '0' || c > '9' {
			return textBad
		}
		if n > (1<<64-1-9)/10 {
			over = true
			continue
		}
		n = n*10 + uint64(c-'0')
	}
	if lo == 0 && hi == 0 {
		return textOK
	}
	switch {
	case over:
		return textOutOfRange
	case neg && n > uint64(-(lo+1))+1:
		return textOutOfRange
	case !neg && n > uint64(hi):
		return textOutOfRange
	}
	return textOK
}

// digitCount counts the integer digits of integer text, without leading
// zeros.
func digitCount(b []byte) int {
	b = trimSpace(b)
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		b = b[1:]
	}
	if k := bytes.IndexByte(b, '.'); k >= 0 {
		b = b[:k]
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	return len(b)
}

// floatText reports whether b may be a float for Doris: anything but
// digits, sign, point, exponent and the words inf/infinity/nan is not.
func floatText(b []byte) bool {
	b = trimSpace(b)
	if len(b) == 0 {
		return false
	}
	digits := false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E':
		default:
			w := strings.ToLower(strings.TrimLeft(string(b), "+-")) // rare: not the hot path
			return w == "inf" || w == "infinity" || w == "nan"
		}
	}
	return digits
}

// decimalText checks decimal text for DECIMAL(p,s) (intDig = p − s): at
// most intDig integer digits once the fraction is rounded half up to scale
// digits (more is out of range: "decimal value is not valid for
// definition", apache/doris be/src/vec/sink/vtablet_block_convertor.cpp);
// an exponent is left to Doris.
func decimalText(b []byte, intDig, scale int) int {
	b = trimSpace(b)
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		b = b[1:]
	}
	if len(b) == 0 {
		return textBad
	}
	seenPoint, digits, intDigits, frac := false, 0, 0, 0
	allNines, carry := true, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits++
			switch {
			case !seenPoint:
				if intDigits == 0 && c == '0' {
					continue // a leading zero
				}
				intDigits++
				allNines = allNines && c == '9'
			case frac < scale:
				frac++
				allNines = allNines && c == '9'
			case frac == scale:
				frac++
				carry = c >= '5'
			}
		case c == '.' && !seenPoint:
			seenPoint = true
		case c == 'e' || c == 'E':
			return textUnsure
		default:
			return textBad
		}
	}
	if digits == 0 {
		return textBad
	}
	if carry && allNines {
		intDigits++ // 99.995 rounds to 100.00
	}
	if intDigits > intDig {
		return textOutOfRange
	}
	return textOK
}

// unescapedLen is the UTF-8 length of JSON string content b (between the
// quotes) once unescaped.
func unescapedLen(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			n++
			continue
		}
		i++
		if b[i] != 'u' || i+4 >= len(b) {
			n++
			continue
		}
		r, ok := hex4(b[i+1 : i+5])
		if !ok {
			n++
			continue
		}
		i += 4
		if r >= 0xD800 && r < 0xDC00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
			n += 4 // a surrogate pair: one 4-byte rune
			i += 6
			continue
		}
		n += utf8.RuneLen(rune(r))
	}
	return n
}

// hex4 parses four hex digits.
func hex4(b []byte) (uint32, bool) {
	var r uint32
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | uint32(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | uint32(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
