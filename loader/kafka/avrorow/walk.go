package avrorow

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// value decodes one value of n from r and appends its JSON to dst. It
// only dispatches, with a small stack frame: a recursive schema recurses
// through value and record once per level (MaxDepth levels take a few
// MiB of stack), and a union resolves its branch in place.
func (d *Decoder) value(dst []byte, r *reader, n *node) ([]byte, error) {
	for n.kind == kUnion {
		start := r.pos
		i, err := r.long()
		if err != nil {
			return dst, err
		}
		if i < 0 || i >= int64(len(n.branches)) {
			r.pos = start
			return dst, r.fail(fmt.Errorf("union branch %d out of the %d branches", i, len(n.branches)))
		}
		n = n.branches[i]
	}
	switch n.kind {
	case kRecord:
		return d.record(dst, r, n)
	case kArray:
		return d.array(dst, r, n)
	case kMap:
		return d.mapValue(dst, r, n)
	}
	return d.scalar(dst, r, n)
}

// record decodes the fields of record n.
func (d *Decoder) record(dst []byte, r *reader, n *node) ([]byte, error) {
	if r.depth++; r.depth > MaxDepth {
		return dst, r.fail(errDepth)
	}
	dst = append(dst, '{')
	for i := range n.fields {
		f := &n.fields[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, f.key...)
		var err error
		if dst, err = d.value(dst, r, f.n); err != nil {
			return dst, inField(err, f.name)
		}
	}
	r.depth--
	if len(dst) > r.limit {
		return dst, r.tooBig()
	}
	return append(dst, '}'), nil
}

// scalar decodes a value of a node that holds no other value.
func (d *Decoder) scalar(dst []byte, r *reader, n *node) ([]byte, error) {
	switch n.kind {
	case kNull:
		return append(dst, "null"...), nil
	case kBool:
		b, err := r.next(1)
		if err != nil {
			return dst, err
		}
		switch b[0] {
		case 0:
			return append(dst, "false"...), nil
		case 1:
			return append(dst, "true"...), nil
		}
		r.pos--
		return dst, r.fail(fmt.Errorf("boolean byte %#x (want 0 or 1)", b[0]))
	case kInt:
		v, err := r.int()
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, int64(v), 10), nil
	case kLong:
		v, err := r.long()
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, v, 10), nil
	case kFloat:
		start := r.pos
		f, err := r.float32()
		if err != nil {
			return dst, err
		}
		return appendFloat(dst, r, start, float64(f), 32)
	case kDouble:
		start := r.pos
		f, err := r.float64()
		if err != nil {
			return dst, err
		}
		return appendFloat(dst, r, start, f, 64)
	case kString:
		b, err := r.lenBytes()
		if err != nil {
			return dst, err
		}
		return appendString(dst, b), nil
	case kBytes:
		b, err := r.lenBytes()
		if err != nil {
			return dst, err
		}
		return appendBase64(dst, b), nil
	case kFixed:
		b, err := r.next(n.size)
		if err != nil {
			return dst, err
		}
		return appendBase64(dst, b), nil
	case kEnum:
		start := r.pos
		i, err := r.int()
		if err != nil {
			return dst, err
		}
		if i < 0 || int(i) >= len(n.symbols) {
			r.pos = start
			return dst, r.fail(fmt.Errorf("enum index %d out of the %d symbols", i, len(n.symbols)))
		}
		return append(dst, n.symbols[i]...), nil
	case kDecimalBytes:
		start := r.pos
		b, err := r.lenBytes()
		if err != nil {
			return dst, err
		}
		return appendDecimal(dst, r, start, b, n)
	case kDecimalFixed:
		start := r.pos
		b, err := r.next(n.size)
		if err != nil {
			return dst, err
		}
		return appendDecimal(dst, r, start, b, n)
	case kDate:
		v, err := r.int()
		if err != nil {
			return dst, err
		}
		t := time.Unix(int64(v)*86400, 0).UTC()
		return appendTime(dst, r, t, false)
	case kTimeMillis:
		start := r.pos
		v, err := r.int()
		if err != nil {
			return dst, err
		}
		if v < 0 || v >= 86400000 {
			r.pos = start
			return dst, r.fail(fmt.Errorf("time-millis %d outside one day", v))
		}
		return append(appendClock(append(dst, '"'), int64(v)*1000, 3), '"'), nil
	case kTimeMicros:
		start := r.pos
		v, err := r.long()
		if err != nil {
			return dst, err
		}
		if v < 0 || v >= 86400000000 {
			r.pos = start
			return dst, r.fail(fmt.Errorf("time-micros %d outside one day", v))
		}
		return append(appendClock(append(dst, '"'), v, 6), '"'), nil
	case kTimestampMillis, kTimestampMicros, kLocalTimestampMillis, kLocalTimestampMicros:
		v, err := r.long()
		if err != nil {
			return dst, err
		}
		var t time.Time
		if n.kind == kTimestampMillis || n.kind == kLocalTimestampMillis {
			t = time.UnixMilli(v)
		} else {
			t = time.UnixMicro(v)
		}
		t = t.UTC()
		if (n.kind == kTimestampMillis || n.kind == kTimestampMicros) && !d.utc {
			t = t.In(d.loc)
		}
		return appendTime(dst, r, t, true)
	case kTimeNanos:
		start := r.pos
		v, err := r.long()
		if err != nil {
			return dst, err
		}
		if v < 0 || v >= 86400e9 {
			r.pos = start
			return dst, r.fail(fmt.Errorf("io.debezium.time.NanoTime %d outside one day", v))
		}
		return append(appendClock(append(dst, '"'), v/1000, 6), '"'), nil
	case kLocalTimestampNanos:
		v, err := r.long()
		if err != nil {
			return dst, err
		}
		return appendTime(dst, r, time.Unix(0, v).UTC(), true)
	case kZonedTimestamp:
		start := r.pos
		b, err := r.lenBytes()
		if err != nil {
			return dst, err
		}
		t, perr := time.Parse(time.RFC3339Nano, string(b))
		if perr != nil {
			r.pos = start
			return dst, r.fail(fmt.Errorf("io.debezium.time.ZonedTimestamp %q: %w", b, perr))
		}
		return appendTime(dst, r, t.In(d.loc), true)
	case kVariableScaleDecimal:
		start := r.pos
		scale, err := r.int()
		if err != nil {
			return dst, err
		}
		if scale < 0 || scale > 1000 {
			r.pos = start
			return dst, r.fail(fmt.Errorf("VariableScaleDecimal scale %d", scale))
		}
		b, err := r.lenBytes()
		if err != nil {
			return dst, err
		}
		return appendDecimal(dst, r, start, b, &node{scale: int(scale)})
	case kDuration:
		b, err := r.next(12)
		if err != nil {
			return dst, err
		}
		le := func(p []byte) uint64 { return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 }
		dst = append(dst, `{"months":`...)
		dst = strconv.AppendUint(dst, le(b[0:4]), 10)
		dst = append(dst, `,"days":`...)
		dst = strconv.AppendUint(dst, le(b[4:8]), 10)
		dst = append(dst, `,"millis":`...)
		dst = strconv.AppendUint(dst, le(b[8:12]), 10)
		return append(dst, '}'), nil
	}
	return dst, r.fail(fmt.Errorf("internal: node kind %d", n.kind))
}

// errDepth is a value nested deeper than MaxDepth.
var errDepth = fmt.Errorf("nested deeper than %d records, arrays and maps", MaxDepth)

// tooBig is the error of a row whose JSON passed r.limit.
func (r *reader) tooBig() error {
	return r.fail(fmt.Errorf("%w: its JSON passes the row bound at payload byte %d", ErrRowTooBig, r.pos))
}

func (d *Decoder) array(dst []byte, r *reader, n *node) ([]byte, error) {
	if r.depth++; r.depth > MaxDepth {
		return dst, r.fail(errDepth)
	}
	dst = append(dst, '[')
	idx := 0
	for {
		cnt, err := r.blockCount()
		if err != nil {
			return dst, err
		}
		if cnt == 0 {
			r.depth--
			return append(dst, ']'), nil
		}
		for ; cnt > 0; cnt-- {
			if idx > 0 {
				dst = append(dst, ',')
			}
			if dst, err = d.value(dst, r, n.items); err != nil {
				return dst, inElem(err, "["+strconv.Itoa(idx)+"]")
			}
			if len(dst) > r.limit {
				return dst, r.tooBig()
			}
			idx++
		}
	}
}

func (d *Decoder) mapValue(dst []byte, r *reader, n *node) ([]byte, error) {
	if r.depth++; r.depth > MaxDepth {
		return dst, r.fail(errDepth)
	}
	dst = append(dst, '{')
	first := true
	for {
		cnt, err := r.blockCount()
		if err != nil {
			return dst, err
		}
		if cnt == 0 {
			r.depth--
			return append(dst, '}'), nil
		}
		for ; cnt > 0; cnt-- {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			k, err := r.lenBytes()
			if err != nil {
				return dst, err
			}
			dst = append(appendString(dst, k), ':')
			if dst, err = d.value(dst, r, n.items); err != nil {
				return dst, inElem(err, "["+strconv.Quote(string(k))+"]")
			}
			if len(dst) > r.limit {
				return dst, r.tooBig()
			}
		}
	}
}

// appendFloat writes f as a JSON number; NaN and ±Inf have no JSON form.
func appendFloat(dst []byte, r *reader, start int, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		r.pos = start
		return dst, r.fail(fmt.Errorf("%v has no JSON form (Doris would not load it from a JSON row)", f))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits), nil
}

// appendBase64 writes b as a standard base64 JSON string.
func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendTime writes t as a JSON string "YYYY-MM-DD" (withClock false) or
// "YYYY-MM-DD HH:MM:SS.ffffff"; years outside Doris's DATE/DATETIME
// range 0000-9999 are refused. Digits are written directly: time.Format
// parses its layout on every call.
func appendTime(dst []byte, r *reader, t time.Time, withClock bool) ([]byte, error) {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return dst, r.fail(errors.New("year " + strconv.Itoa(y) + " outside Doris's DATE/DATETIME range 0000-9999"))
	}
	dst = append(dst, '"', byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10))
	if withClock {
		h, m, sec := t.Clock()
		dst = append(dst, ' ')
		dst = appendClock(dst, (int64(h)*3600+int64(m)*60+int64(sec))*1e6+int64(t.Nanosecond()/1000), 6)
	}
	return append(dst, '"'), nil
}

// appendClock writes micros since midnight as HH:MM:SS with digits (3 or
// 6) fraction digits.
func appendClock(dst []byte, micros int64, digits int) []byte {
	h, m, s := micros/3600e6, micros/60e6%60, micros/1e6%60
	frac := micros % 1e6
	dst = append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10), '.')
	if digits == 3 {
		frac /= 1000
	}
	var buf [6]byte
	for i := digits - 1; i >= 0; i-- {
		buf[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(dst, buf[:digits]...)
}
