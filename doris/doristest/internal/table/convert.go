package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Conversion outcomes. errInvalid is a failed type conversion: NULL in
// non-strict mode, a filtered row in strict mode. errTooLong is the sink's
// length validation: the row is filtered in either mode.
var (
	errInvalid = errors.New("invalid value")
	errTooLong = errors.New("the length of input is too long than schema")
)

// jsonRaw marks a source value taken from a JSON document (object, array or
// scalar as raw JSON text), as opposed to CSV text.
type jsonRaw json.RawMessage

// jsonText is the source text of a JSON value the way Doris's JSON reader
// hands it to a column: strings unquoted, booleans as 1/0, objects and
// arrays as their JSON text. ok is false for JSON null.
func jsonText(r jsonRaw) (s string, isString, ok bool) {
	b := []byte(r)
	if len(b) == 0 {
		return "", false, false
	}
	switch b[0] {
	case 'n':
		return "", false, false
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return string(b), false, true
		}
		return s, true, true
	case 't':
		return "1", false, true
	case 'f':
		return "0", false, true
	}
	return string(b), false, true
}

// convert turns a source value (nil, CSV text string, jsonRaw, or an
// expression result *big.Rat / bool / string) into the stored Go value of t:
// nil, int64, float64 or string.
func convert(t colType, v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case jsonRaw:
		s, isString, ok := jsonText(x)
		if !ok {
			return nil, nil
		}
		if t.kind == kJSON && !isString {
			return convertJSONText(s)
		}
		return convertText(t, s)
	case *big.Rat:
		return convertRat(t, x)
	case bool:
		if x {
			return convertText(t, "1")
		}
		return convertText(t, "0")
	case int64:
		return convertRat(t, new(big.Rat).SetInt64(x))
	case float64:
		if t.kind == kFloat {
			return x, nil
		}
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
		if !ok {
			return nil, errInvalid
		}
		return convertRat(t, r)
	case string:
		return convertText(t, x)
	}
	return nil, errInvalid
}

func convertJSONText(s string) (any, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, errInvalid
	}
	return buf.String(), nil
}

// convertText converts CSV/JSON text per column type (docs/doris-facts.md §7 data
// model; conversion rules follow Doris's string parsers closely enough for
// tests: see the package report for gaps).
func convertText(t colType, s string) (any, error) {
	switch t.kind {
	case kInt:
		return parseIntText(t, strings.TrimSpace(s))
	case kLargeInt:
		return parseLargeInt(strings.TrimSpace(s))
	case kBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "1":
			return int64(1), nil
		case "false", "0":
			return int64(0), nil
		}
		return nil, errInvalid
	case kFloat:
		s = strings.TrimSpace(s)
		if s == "" || strings.ContainsAny(s, "xX_") {
			return nil, errInvalid
		}
		bits := 64
		if t.isFloat32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return nil, errInvalid
		}
		if t.isFloat32 {
			// keep the shortest decimal form of the float32 value
			f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
		}
		return f, nil
	case kDecimal:
		r, ok := parseDecimalText(strings.TrimSpace(s))
		if !ok {
			return nil, errInvalid
		}
		return formatDecimal(t, r)
	case kDate, kDateTime:
		tm, ok := parseDateTime(strings.TrimSpace(s))
		if !ok {
			return nil, errInvalid
		}
		return formatDateTime(t, tm), nil
	case kString:
		if t.maxLen > 0 && len(s) > t.maxLen {
			return nil, errTooLong
		}
		return s, nil
	case kJSON:
		return convertJSONText(s)
	}
	return nil, errInvalid
}

func parseIntText(t colType, s string) (any, error) {
	// Doris's StringParser accepts a fractional part and truncates it.
	if i := strings.IndexByte(s, '.'); i >= 0 {
		frac := s[i+1:]
		for _, c := range frac {
			if c < '0' || c > '9' {
				return nil, errInvalid
			}
		}
		s = s[:i]
		if s == "" || s == "-" || s == "+" {
			s += "0"
		}
	}
	n, err := strconv.ParseInt(s, 10, int(t.bits))
	if err != nil {
		return nil, errInvalid
	}
	return n, nil
}

var (
	maxLargeInt = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
	minLargeInt = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
)

func parseLargeInt(s string) (any, error) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return nil, errInvalid
	}
	for i, c := range s {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return nil, errInvalid
		}
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Cmp(maxLargeInt) > 0 || n.Cmp(minLargeInt) < 0 {
		return nil, errInvalid
	}
	return n.String(), nil
}

// parseDecimalText parses plain or exponent decimal notation.
func parseDecimalText(s string) (*big.Rat, bool) {
	if s == "" {
		return nil, false
	}
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		default:
			return nil, false // rejects "1/2", hex, inf, nan
		}
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// Bound the exponent: big.Rat would materialise 10^exp.
		if exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+")); err != nil || exp > 400 || exp < -400 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// formatDecimal rounds r half away from zero to t.scale digits and rejects
// values whose integer digits exceed prec − scale.
func formatDecimal(t colType, r *big.Rat) (any, error) {
	num := new(big.Int).Mul(r.Num(), pow10(t.scale))
	den := r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// half away from zero: |2m| >= den
	m2 := new(big.Int).Abs(m)
	m2.Lsh(m2, 1)
	if m2.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if new(big.Int).Abs(q).Cmp(pow10(t.prec)) >= 0 {
		return nil, errInvalid
	}
	return scaledString(q, t.scale), nil
}

// scaledString prints q / 10^scale with exactly scale fraction digits.
func scaledString(q *big.Int, scale int) string {
	neg := q.Sign() < 0
	digits := new(big.Int).Abs(q).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// convertRat converts an arithmetic result (columns mapping) to t, the way
// Doris casts a numeric expression: integers truncate.
func convertRat(t colType, r *big.Rat) (any, error) {
	switch t.kind {
	case kInt, kBool, kLargeInt:
		q := new(big.Int).Quo(r.Num(), r.Denom())
		if t.kind == kBool {
			if q.Sign() != 0 || r.Sign() != 0 {
				return int64(1), nil
			}
			return int64(0), nil
		}
		if t.kind == kLargeInt {
			return parseLargeInt(q.String())
		}
		if !q.IsInt64() {
			return nil, errInvalid
		}
		n := q.Int64()
		lim := int64(1) << (t.bits - 1)
		if t.bits < 64 && (n >= lim || n < -lim) {
			return nil, errInvalid
		}
		return n, nil
	case kFloat:
		f, _ := r.Float64()
		if math.IsInf(f, 0) {
			return nil, errInvalid
		}
		return f, nil
	case kDecimal:
		return formatDecimal(t, r)
	}
	return convertText(t, ratText(r))
}

// ratText prints r as a short decimal (integers exactly).
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(9)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// parseDateTime accepts the date/datetime text forms tests use:
// YYYY-MM-DD, YYYY/MM/DD (1–2 digit month/day), YYYYMMDD, optionally followed
// by ' ' or 'T' and HH:MM[:SS[.ffffff]]; and YYYYMMDDHHMMSS.
func parseDateTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	datePart, timePart := s, ""
	if i := strings.IndexAny(s, " T"); i >= 0 {
		datePart, timePart = s[:i], strings.TrimSpace(s[i+1:])
	}
	var y, mo, d int
	var ok bool
	if strings.ContainsAny(datePart, "-/") {
		sep := "-"
		if strings.Contains(datePart, "/") {
			sep = "/"
		}
		p := strings.Split(datePart, sep)
		if len(p) != 3 || len(p[0]) != 4 || len(p[1]) < 1 || len(p[1]) > 2 || len(p[2]) < 1 || len(p[2]) > 2 {
			return time.Time{}, false
		}
		y, ok = atoiDigits(p[0])
		if !ok {
			return time.Time{}, false
		}
		if mo, ok = atoiDigits(p[1]); !ok {
			return time.Time{}, false
		}
		if d, ok = atoiDigits(p[2]); !ok {
			return time.Time{}, false
		}
	} else {
		if len(datePart) == 14 && timePart == "" {
			datePart, timePart = datePart[:8], datePart[8:10]+":"+datePart[10:12]+":"+datePart[12:]
		}
		if len(datePart) != 8 {
			return time.Time{}, false
		}
		if y, ok = atoiDigits(datePart[:4]); !ok {
			return time.Time{}, false
		}
		if mo, ok = atoiDigits(datePart[4:6]); !ok {
			return time.Time{}, false
		}
		if d, ok = atoiDigits(datePart[6:]); !ok {
			return time.Time{}, false
		}
	}
	var hh, mm, ss, nanos int
	if timePart != "" {
		frac := ""
		if i := strings.IndexByte(timePart, '.'); i >= 0 {
			timePart, frac = timePart[:i], timePart[i+1:]
		}
		p := strings.Split(timePart, ":")
		if len(p) < 2 || len(p) > 3 {
			return time.Time{}, false
		}
		vals := []*int{&hh, &mm, &ss}
		for i, x := range p {
			if len(x) < 1 || len(x) > 2 {
				return time.Time{}, false
			}
			if *vals[i], ok = atoiDigits(x); !ok {
				return time.Time{}, false
			}
		}
		if frac != "" {
			if len(frac) > 9 {
				frac = frac[:9]
			}
			n, ok := atoiDigits(frac)
			if !ok {
				return time.Time{}, false
			}
			for i := len(frac); i < 9; i++ {
				n *= 10
			}
			nanos = n
		}
		if hh > 23 || mm > 59 || ss > 59 {
			return time.Time{}, false
		}
	}
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	tm := time.Date(y, time.Month(mo), d, hh, mm, ss, nanos, time.UTC)
	if tm.Day() != d || int(tm.Month()) != mo {
		return time.Time{}, false // e.g. 2023-02-30
	}
	return tm, true
}

func atoiDigits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func formatDateTime(t colType, tm time.Time) string {
	if t.kind == kDate {
		return tm.Format("2006-01-02")
	}
	unit := time.Duration(1)
	for i := t.scale; i < 9; i++ {
		unit *= 10
	}
	tm = tm.Round(unit)
	s := tm.Format("2006-01-02 15:04:05")
	if t.scale > 0 {
		s += fmt.Sprintf(".%09d", tm.Nanosecond())[:t.scale+1]
	}
	return s
}
