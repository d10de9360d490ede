package protorow

import (
	"fmt"
	"math/big"
	"math/bits"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ints reads the varint fields of a small message (Date, TimeOfDay,
// Decimal's precision and scale) into vals by field number (1-based); the
// last occurrence wins. It returns the content of the last bytes field 1
// too (Decimal.value).
func (s *state) ints(b []byte, base int, mp *msgPlan, vals []int64) (bytes1 []byte, err error) {
	start, winStart, err := s.scan(b, base, mp)
	defer s.pop(start, winStart)
	if err != nil {
		return nil, err
	}
	for _, e := range s.ents[start:] {
		num := mp.fields[e.f].num
		if e.wt == protowire.BytesType {
			bytes1 = b[e.start:e.end]
			continue
		}
		u, _ := protowire.ConsumeVarint(b[e.start:e.end])
		if int(num) <= len(vals) {
			if mp.fields[e.f].kind == protoreflect.Uint32Kind {
				vals[num-1] = int64(uint32(u))
			} else {
				vals[num-1] = int64(int32(u))
			}
		}
	}
	return bytes1, nil
}

// date appends a google.type.Date as "YYYY-MM-DD" (a Doris DATE). A
// partial date (year, month or day 0, which the type allows) is null: no
// DATE holds it.
func (s *state) date(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	var v [3]int64
	if _, err := s.ints(b, base, mp, v[:]); err != nil {
		return dst, err
	}
	y, m, d := v[0], v[1], v[2]
	if y == 0 || m == 0 || d == 0 {
		return append(dst, "null"...), nil
	}
	if y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31 {
		return dst, &DecodeError{Offset: base, Field: string(mp.name), Reason: fmt.Sprintf("date %d-%d-%d out of range", y, m, d)}
	}
	dst = append(dst, '"')
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, d, 2)
	return append(dst, '"'), nil
}

// timeOfDay appends a google.type.TimeOfDay as "HH:MM:SS.ffffff"
// (nanoseconds truncated to microseconds).
func (s *state) timeOfDay(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	var v [4]int64
	if _, err := s.ints(b, base, mp, v[:]); err != nil {
		return dst, err
	}
	h, m, sec, n := v[0], v[1], v[2], v[3]
	if h < 0 || h > 24 || m < 0 || m > 59 || sec < 0 || sec > 60 || n < 0 || n > 999_999_999 {
		return dst, &DecodeError{Offset: base, Field: string(mp.name),
			Reason: fmt.Sprintf("time of day %d:%d:%d.%09d out of range", h, m, sec, n)}
	}
	dst = append(dst, '"')
	dst = appendPadded(dst, h, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, sec, 2)
	dst = append(dst, '.')
	dst = appendPadded(dst, n/1000, 6)
	return append(dst, '"'), nil
}

func appendPadded(dst []byte, v int64, width int) []byte {
	var buf [20]byte
	b := strconv.AppendInt(buf[:0], v, 10)
	for i := len(b); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, b...)
}

// maxDecimalBytes bounds a decimal's unscaled value past its redundant
// sign bytes: k bytes hold at least (8k-9)·log10(2) digits, more than 76
// (Doris's largest DECIMAL precision) beyond 76/2+2 bytes.
const maxDecimalBytes = 76/2 + 2

// decimal appends a confluent.type.Decimal as a JSON number: the unscaled
// big-endian two's-complement value with the decimal point scale digits
// from the right (for a Doris DECIMAL(p,s) column; Doris rounds or refuses
// a value that does not fit the column, per its strict mode). Values of up
// to 16 bytes (DECIMAL up to 38 digits) are converted without allocation.
func (s *state) decimal(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	var v [3]int64 // value (unused), precision, scale
	raw, err := s.ints(b, base, mp, v[:])
	if err != nil {
		return dst, err
	}
	scale := v[2]
	if scale < -1000 || scale > 1000 {
		return dst, &DecodeError{Offset: base, Field: string(mp.name), Reason: fmt.Sprintf("decimal scale %d out of range", scale)}
	}
	var digits [48]byte
	var d []byte
	neg := len(raw) > 0 && raw[0]&0x80 != 0
	// Past its redundant sign bytes, a value of more than maxDecimalBytes
	// bytes has more digits than any Doris DECIMAL (76) holds: it fails
	// before big.Int makes its digits (a hostile 1 MiB value cost seconds
	// of CPU per record; issue 25).
	for len(raw) > 1 && (raw[0] == 0 && raw[1]&0x80 == 0 || raw[0] == 0xff && raw[1]&0x80 != 0) {
		raw = raw[1:]
	}
	if len(raw) > maxDecimalBytes {
		return dst, &DecodeError{Offset: base, Field: string(mp.name),
			Reason: fmt.Sprintf("decimal value of %d bytes has more than the 76 digits a Doris DECIMAL holds", len(raw))}
	}
	if len(raw) <= 16 {
		var hi, lo uint64
		for _, c := range raw { // sign-extended big-endian into 128 bits
			hi = hi<<8 | lo>>56
			lo = lo<<8 | uint64(c)
		}
		if neg && len(raw) < 16 {
			shift := uint(len(raw) * 8)
			if shift < 64 {
				lo |= ^uint64(0) << shift
				hi = ^uint64(0)
			} else {
				hi |= ^uint64(0) << (shift - 64)
			}
		}
		if neg { // two's complement negate
			lo = ^lo + 1
			hi = ^hi
			if lo == 0 {
				hi++
			}
		}
		d = appendUint128(digits[:0], hi, lo)
	} else {
		n := new(big.Int).SetBytes(raw)
		if neg {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(raw)*8)))
			n.Neg(n)
		}
		d = n.Append(nil, 10)
	}
	if neg {
		dst = append(dst, '-')
	}
	switch {
	case scale <= 0:
		dst = append(dst, d...)
		if string(d) != "0" {
			for range -scale {
				dst = append(dst, '0')
			}
		}
	case int64(len(d)) > scale:
		dst = append(dst, d[:int64(len(d))-scale]...)
		dst = append(dst, '.')
		dst = append(dst, d[int64(len(d))-scale:]...)
	default:
		dst = append(dst, '0', '.')
		for range scale - int64(len(d)) {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	}
	return dst, nil
}

// appendUint128 appends the decimal digits of hi<<64 | lo.
func appendUint128(dst []byte, hi, lo uint64) []byte {
	if hi == 0 {
		return strconv.AppendUint(dst, lo, 10)
	}
	// Divide by 10^19 (the largest power of ten in a uint64) until it fits.
	const e19 = 10_000_000_000_000_000_000
	var parts [3]uint64
	n := 0
	for hi != 0 {
		var r uint64
		qhi := hi / e19
		hi, r = qhi, hi%e19
		lo, r = bits.Div64(r, lo, e19)
		parts[n] = r
		n++
	}
	dst = strconv.AppendUint(dst, lo, 10)
	for i := n - 1; i >= 0; i-- {
		var buf [20]byte
		p := strconv.AppendUint(buf[:0], parts[i], 10)
		for range 19 - len(p) {
			dst = append(dst, '0')
		}
		dst = append(dst, p...)
	}
	return dst
}
