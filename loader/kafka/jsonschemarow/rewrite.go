package jsonschemarow

import (
	"errors"
	"fmt"
	"time"

	"github.com/doris-sink/doris-sink/loader/kafka/internal/jsontext"
)

// datetimeLayout is Doris DATETIME(6) text.
const datetimeLayout = "2006-01-02 15:04:05.000000"

// rewriter copies a valid JSON document compactly, rewriting the date-time
// strings the plan points at.
type rewriter struct {
	src []byte
	i   int
	tz  *time.Location
}

func (w *rewriter) space() { w.i = skipSpace(w.src, w.i) }

// value copies the value at w.i; n is its plan node (nil: copy as is).
func (w *rewriter) value(dst []byte, n *node) ([]byte, error) {
	w.space()
	start := w.i
	switch w.src[w.i] {
	case '{':
		if n == nil {
			return w.skip(dst, start), nil
		}
		dst = append(dst, '{')
		w.i++
		first := true
		for {
			w.space()
			if w.src[w.i] == '}' {
				w.i++
				return append(dst, '}'), nil
			}
			if w.src[w.i] == ',' {
				w.i++
				w.space()
			}
			ks := w.i
			w.str()
			key := w.src[ks+1 : w.i-1]
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, w.src[ks:w.i]...)
			w.space()
			w.i++ // ':'
			dst = append(dst, ':')
			var c *node
			if !hasEscape(key) {
				c = n.child(key)
			} else {
				c = n.addl // an escaped key: matched against additionalProperties only
			}
			var err error
			if dst, err = w.value(dst, c); err != nil {
				return dst, err
			}
		}
	case '[':
		if n == nil || n.items == nil {
			return w.skip(dst, start), nil
		}
		dst = append(dst, '[')
		w.i++
		first := true
		for {
			w.space()
			if w.src[w.i] == ']' {
				w.i++
				return append(dst, ']'), nil
			}
			if w.src[w.i] == ',' {
				w.i++
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			var err error
			if dst, err = w.value(dst, n.items); err != nil {
				return dst, err
			}
		}
	case '"':
		w.str()
		s := w.src[start+1 : w.i-1]
		if n == nil || !n.dateTime || hasEscape(s) {
			return append(dst, w.src[start:w.i]...), nil
		}
		t, err := parseRFC3339(s)
		if err != nil {
			return append(dst, w.src[start:w.i]...), nil // not a date-time: Doris decides
		}
		t = t.In(w.tz)
		if y := t.Year(); y < 0 || y > 9999 {
			return dst, &DecodeError{Offset: start, Reason: fmt.Sprintf(
				"date-time %s is year %d in time zone %s, outside Doris DATETIME", s, y, w.tz)}
		}
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, datetimeLayout)
		return append(dst, '"'), nil
	default:
		return w.skip(dst, start), nil
	}
}

// skip copies the value at start compactly and moves past it.
func (w *rewriter) skip(dst []byte, start int) []byte {
	sc := scanner{src: w.src, i: start, start: start, dst: dst, emit: true}
	sc.value() // valid: checked before
	sc.flush(sc.i)
	w.i = sc.i
	return sc.dst
}

// str moves past the string starting at w.i (valid: checked before).
func (w *rewriter) str() { w.i, _ = jsontext.ScanString(w.src, w.i) }

func hasEscape(s []byte) bool {
	for _, c := range s {
		if c == '\\' {
			return true
		}
	}
	return false
}

// parseRFC3339 parses an RFC 3339 date-time. RFC 3339 §5.6 allows a lower
// case 't' and 'z', which time.RFC3339Nano does not: they are upper-cased
// first (the format has no other letters).
func parseRFC3339(s []byte) (time.Time, error) {
	var buf [64]byte
	if len(s) > len(buf) {
		return time.Time{}, errTooLong
	}
	b := buf[:len(s)]
	copy(b, s)
	for i, c := range b {
		if c == 't' || c == 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return time.Parse(time.RFC3339Nano, string(b))
}

var errTooLong = errors.New("too long for a date-time")
