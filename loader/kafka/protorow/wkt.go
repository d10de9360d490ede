package protorow

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Limits of google.protobuf.Timestamp and Duration (timestamp.proto,
// duration.proto): 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z,
// and ±10,000 years.
const (
	minTimestampSec = -62135596800
	maxTimestampSec = 253402300799
	maxDurationSec  = 315576000000
)

// datetimeLayout is Doris DATETIME(6) text.
const datetimeLayout = "2006-01-02 15:04:05.000000"

// message appends the JSON value of a message: a well-known type's own
// rendering, else an object of its fields.
func (s *state) message(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	switch mp.wkt {
	case wktTimestamp:
		return s.timestamp(dst, b, base, mp)
	case wktDuration:
		return s.duration(dst, b, base, mp)
	case wktDecimal:
		return s.decimal(dst, b, base, mp)
	case wktDate:
		return s.date(dst, b, base, mp)
	case wktTimeOfDay:
		return s.timeOfDay(dst, b, base, mp)
	case wktWrapper, wktValue:
		return s.wrapped(dst, b, base, mp)
	case wktStruct, wktList:
		start, winStart, err := s.scan(b, base, mp)
		defer s.pop(start, winStart)
		if err != nil {
			return dst, err
		}
		f := &mp.fields[0] // Struct.fields (map) or ListValue.values (repeated)
		if len(s.ents) == start {
			return s.zero(dst, f, base)
		}
		return s.value(dst, b, base, mp, f, start, len(s.ents))
	}
	return s.walk(dst, b, base, mp)
}

// wrapped appends the one set field of a wrapper (Int64Value.value …, its
// zero when absent) or of a Value (its kind oneof; null when none is set).
func (s *state) wrapped(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	if s.depth++; s.depth > maxDepth {
		return dst, &DecodeError{Offset: base, Field: string(mp.name), Reason: fmt.Sprintf("nested deeper than %d", maxDepth)}
	}
	defer func() { s.depth-- }()
	start, winStart, err := s.scan(b, base, mp)
	defer s.pop(start, winStart)
	if err != nil {
		return dst, err
	}
	end := len(s.ents)
	if start == end {
		if mp.wkt == wktValue {
			return append(dst, "null"...), nil
		}
		return s.zero(dst, &mp.fields[0], base)
	}
	fi := s.ents[end-1].f // wrappers have one field
	if mp.wkt == wktValue {
		fi = s.wins[winStart] // Value has one oneof: kind
	}
	// Entries are grouped by field: write the winner's, check the others'.
	for j := start; j < end; {
		f := s.ents[j].f
		k := j
		for k < end && s.ents[k].f == f {
			k++
		}
		if f != fi {
			if dst, err = s.check(dst, b, base, mp, &mp.fields[f], j, k); err != nil {
				return dst, err
			}
		}
		j = k
	}
	for j := start; j < end; j++ {
		if s.ents[j].f == fi {
			k := j
			for k < end && s.ents[k].f == fi {
				k++
			}
			return s.value(dst, b, base, mp, &mp.fields[fi], j, k)
		}
	}
	return dst, nil // not reached: fi has entries
}

// secondsNanos reads the seconds (1) and nanos (2) fields shared by
// Timestamp and Duration; the last occurrence of each wins.
func (s *state) secondsNanos(b []byte, base int, mp *msgPlan) (sec int64, nanos int32, err error) {
	start, winStart, err := s.scan(b, base, mp)
	defer s.pop(start, winStart)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range s.ents[start:] {
		u, _ := protowire.ConsumeVarint(b[e.start:e.end])
		if mp.fields[e.f].num == 1 {
			sec = int64(u)
		} else {
			nanos = int32(u)
		}
	}
	return sec, nanos, nil
}

// timestamp appends a google.protobuf.Timestamp as Doris DATETIME(6) text
// ("YYYY-MM-DD HH:MM:SS.ffffff") in the decoder's time zone. Nanoseconds
// beyond the microsecond are truncated (DATETIME(6) holds microseconds).
func (s *state) timestamp(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	sec, nanos, err := s.secondsNanos(b, base, mp)
	if err != nil {
		return dst, err
	}
	if sec < minTimestampSec || sec > maxTimestampSec || nanos < 0 || nanos > 999_999_999 {
		return dst, &DecodeError{Offset: base, Field: string(mp.name),
			Reason: fmt.Sprintf("timestamp seconds %d nanos %d out of range (0001-01-01 to 9999-12-31)", sec, nanos)}
	}
	t := time.Unix(sec, int64(nanos)).In(s.tz)
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, &DecodeError{Offset: base, Field: string(mp.name),
			Reason: fmt.Sprintf("timestamp %d.%09d is year %d in time zone %s, outside Doris DATETIME", sec, nanos, y, s.tz)}
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, datetimeLayout)
	return append(dst, '"'), nil
}

// duration appends a google.protobuf.Duration as its length in seconds, a
// JSON number with up to 9 decimals (for a DECIMAL(p,9) or DOUBLE column).
func (s *state) duration(dst, b []byte, base int, mp *msgPlan) ([]byte, error) {
	sec, nanos, err := s.secondsNanos(b, base, mp)
	if err != nil {
		return dst, err
	}
	if sec < -maxDurationSec || sec > maxDurationSec || nanos < -999_999_999 || nanos > 999_999_999 ||
		(sec > 0 && nanos < 0) || (sec < 0 && nanos > 0) {
		return dst, &DecodeError{Offset: base, Field: string(mp.name),
			Reason: fmt.Sprintf("duration seconds %d nanos %d out of range or of mixed signs", sec, nanos)}
	}
	if sec < 0 || nanos < 0 {
		dst = append(dst, '-')
	}
	dst = strconv.AppendUint(dst, uint64(abs(sec)), 10)
	if nanos == 0 {
		return dst, nil
	}
	var frac [10]byte
	frac[0] = '.'
	n := abs(int64(nanos))
	for i := 9; i >= 1; i-- {
		frac[i] = byte('0' + n%10)
		n /= 10
	}
	e := 10
	for frac[e-1] == '0' {
		e--
	}
	return append(dst, frac[:e]...), nil
}

func abs(v int64) int64 {
	if v < 0 {
		if v == math.MinInt64 {
			return math.MaxInt64
		}
		return -v
	}
	return v
}
