package sqlexec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// castTargets caches parsed CAST targets by their text (a query casts every
// row to the same few types).
var castTargets sync.Map

// Dates and date-times are held as text in Doris's printed form:
// "2006-01-02" (DATE) and "2006-01-02 15:04:05[.ffffff]" (DATETIME(p), exactly
// p fraction digits). This file parses and prints them the way Doris does and
// compares them by value (the doris_datetime collation).

// datetimeCollation is the collation of DATE and DATETIME columns.
const datetimeCollation = "doris_datetime"

// parseDatetime reads a Doris date or date-time literal: YYYY-MM-DD or
// YYYYMMDD, optionally followed by ' ' or 'T' and HH:MM[:SS[.f…]]; also
// YYYYMMDDHHMMSS. ok is false for anything else (Doris's CAST answers NULL).
func parseDatetime(s string) (t time.Time, hasTime, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false, false
	}
	datePart, timePart := s, ""
	if i := strings.IndexAny(s, " T"); i >= 0 {
		datePart, timePart = s[:i], strings.TrimSpace(s[i+1:])
	}
	var y, mo, d int
	switch {
	case strings.ContainsAny(datePart, "-/"):
		sep := "-"
		if strings.Contains(datePart, "/") {
			sep = "/"
		}
		p := strings.Split(datePart, sep)
		if len(p) != 3 || len(p[0]) != 4 || len(p[1]) < 1 || len(p[1]) > 2 || len(p[2]) < 1 || len(p[2]) > 2 {
			return time.Time{}, false, false
		}
		var ok1, ok2, ok3 bool
		y, ok1 = digits(p[0])
		mo, ok2 = digits(p[1])
		d, ok3 = digits(p[2])
		if !ok1 || !ok2 || !ok3 {
			return time.Time{}, false, false
		}
	case len(datePart) == 14 && timePart == "":
		datePart, timePart = datePart[:8], datePart[8:10]+":"+datePart[10:12]+":"+datePart[12:]
		fallthrough
	case len(datePart) == 8:
		var ok1, ok2, ok3 bool
		y, ok1 = digits(datePart[:4])
		mo, ok2 = digits(datePart[4:6])
		d, ok3 = digits(datePart[6:])
		if !ok1 || !ok2 || !ok3 {
			return time.Time{}, false, false
		}
	default:
		return time.Time{}, false, false
	}
	var hh, mm, ss, nanos int
	if timePart != "" {
		hasTime = true
		frac := ""
		if i := strings.IndexByte(timePart, '.'); i >= 0 {
			timePart, frac = timePart[:i], timePart[i+1:]
		}
		p := strings.Split(timePart, ":")
		if len(p) < 2 || len(p) > 3 {
			return time.Time{}, false, false
		}
		vals := []*int{&hh, &mm, &ss}
		for i, x := range p {
			n, ok := digits(x)
			if !ok || len(x) > 2 {
				return time.Time{}, false, false
			}
			*vals[i] = n
		}
		if frac != "" {
			if len(frac) > 9 {
				frac = frac[:9]
			}
			n, ok := digits(frac)
			if !ok {
				return time.Time{}, false, false
			}
			for i := len(frac); i < 9; i++ {
				n *= 10
			}
			nanos = n
		}
		if hh > 23 || mm > 59 || ss > 59 {
			return time.Time{}, false, false
		}
	}
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false, false
	}
	t = time.Date(y, time.Month(mo), d, hh, mm, ss, nanos, time.UTC)
	if t.Day() != d || int(t.Month()) != mo {
		return time.Time{}, false, false // 2023-02-30
	}
	return t, hasTime, true
}

func digits(s string) (int, bool) {
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

// printDatetime prints t as DATETIME(p): p (0–6) fraction digits, the rest
// dropped (callers round first, see roundDatetime).
func printDatetime(t time.Time, p int) string {
	s := t.Format(time.DateTime)
	if p > 0 {
		s += fmt.Sprintf(".%06d", t.Nanosecond()/1000)[:p+1]
	}
	return s
}

// roundDatetime rounds t to p fraction digits, as Doris does when a value
// with more digits is cast to DATETIME(p).
func roundDatetime(t time.Time, p int) time.Time {
	unit := time.Duration(1)
	for i := p; i < 9; i++ {
		unit *= 10
	}
	return t.Round(unit)
}

// FormatDatetime prints the text s of a DATETIME(p) value with exactly p
// fraction digits (Doris prints DATETIME(3) as "2024-01-02 03:04:05.000").
// Text that is not a date-time is returned unchanged.
func FormatDatetime(s string, p int) string {
	t, _, ok := parseDatetime(s)
	if !ok {
		return s
	}
	return printDatetime(roundDatetime(t, p), p)
}

// compareDatetime is the doris_datetime collation: two texts that both parse
// as dates or date-times compare by value (a DATE as midnight); otherwise
// bytewise.
func compareDatetime(a, b string) int {
	if canonicalDatetime(a) && canonicalDatetime(b) {
		// Fast path for Doris's printed forms (fixed-width fields): equal
		// prefixes compare bytewise; the longer text is greater unless the
		// rest is a zero time or fraction (a DATE is its midnight).
		n := min(len(a), len(b))
		if c := strings.Compare(a[:n], b[:n]); c != 0 {
			return c
		}
		rest, sign := a[n:], 1
		if len(b) > len(a) {
			rest, sign = b[n:], -1
		}
		if strings.Trim(rest, " :.0") == "" {
			return 0
		}
		return sign
	}
	ta, _, okA := parseDatetime(a)
	tb, _, okB := parseDatetime(b)
	if okA && okB {
		return ta.Compare(tb)
	}
	return strings.Compare(a, b)
}

// canonicalDatetime reports whether s is YYYY-MM-DD, optionally followed by
// " HH:MM:SS" and optionally ".f…" (digits at every digit position).
func canonicalDatetime(s string) bool {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[0:4]) || !allDigits(s[5:7]) || !allDigits(s[8:10]) {
		return false
	}
	if len(s) == 10 {
		return true
	}
	if len(s) < 19 || s[10] != ' ' || s[13] != ':' || s[16] != ':' ||
		!allDigits(s[11:13]) || !allDigits(s[14:16]) || !allDigits(s[17:19]) {
		return false
	}
	if len(s) == 19 {
		return true
	}
	return s[19] == '.' && len(s) > 20 && allDigits(s[20:])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// castTarget is a parsed CAST target type.
type castTarget struct {
	kind  string // INT, DECIMAL, DOUBLE, DATE, DATETIME, STRING
	bits  int    // INT width
	prec  int    // DECIMAL precision
	scale int    // DECIMAL scale, DATETIME fraction digits
}

// parseCastTarget parses the type text of CAST(x AS type).
func parseCastTarget(s string) (castTarget, error) {
	t := strings.ToUpper(strings.Join(strings.Fields(s), ""))
	base, args := t, ""
	if i := strings.IndexByte(t, '('); i >= 0 {
		base, args = t[:i], t[i:]
	}
	switch base {
	case "TINYINT":
		return castTarget{kind: "INT", bits: 8}, nil
	case "SMALLINT":
		return castTarget{kind: "INT", bits: 16}, nil
	case "INT", "INTEGER", "SIGNED", "SIGNEDINTEGER":
		return castTarget{kind: "INT", bits: 32}, nil
	case "BIGINT", "SIGNEDBIGINT":
		return castTarget{kind: "INT", bits: 64}, nil
	case "DECIMAL", "DECIMALV3", "DECIMALV2", "NUMERIC":
		p, sc := decimalArgs(args)
		if p < 1 || p > 38 || sc < 0 || sc > p {
			return castTarget{}, fmt.Errorf("invalid DECIMAL(%d,%d) in CAST", p, sc)
		}
		return castTarget{kind: "DECIMAL", prec: p, scale: sc}, nil
	case "DOUBLE", "FLOAT":
		return castTarget{kind: "DOUBLE"}, nil
	case "DATE", "DATEV2":
		return castTarget{kind: "DATE"}, nil
	case "DATETIME", "DATETIMEV2", "TIMESTAMP":
		p := 0
		if args != "" {
			p, _ = decimalArgs(args)
		}
		if p < 0 || p > 6 {
			return castTarget{}, fmt.Errorf("invalid DATETIME(%d) in CAST: the scale is 0 to 6", p)
		}
		return castTarget{kind: "DATETIME", scale: p}, nil
	case "VARCHAR", "CHAR", "STRING", "TEXT":
		return castTarget{kind: "STRING"}, nil
	case "BOOLEAN", "BOOL":
		return castTarget{kind: "BOOL"}, nil
	}
	return castTarget{}, fmt.Errorf("CAST(... AS %s) is not supported by the emulator", s)
}

// dorisCast converts v to target the way Doris's CAST does in its default
// (non-strict) mode: a value that does not convert, or does not fit, is
// NULL.
func dorisCast(v any, target string) (any, error) {
	var t castTarget
	if c, ok := castTargets.Load(target); ok {
		t = c.(castTarget)
	} else {
		var err error
		if t, err = parseCastTarget(target); err != nil {
			return nil, err
		}
		castTargets.Store(target, t)
	}
	if v == nil {
		return nil, nil
	}
	switch t.kind {
	case "STRING":
		return textOf(v), nil
	case "BOOL":
		switch x := v.(type) {
		case int64:
			return boolInt(x != 0), nil
		case float64:
			return boolInt(x != 0), nil
		}
		switch strings.ToLower(strings.TrimSpace(textOf(v))) {
		case "true", "1":
			return int64(1), nil
		case "false", "0":
			return int64(0), nil
		}
		return nil, nil
	case "DATE", "DATETIME":
		var tm time.Time
		switch x := v.(type) {
		case int64:
			s := strconv.FormatInt(x, 10)
			var ok bool
			if tm, _, ok = parseDatetime(s); !ok {
				return nil, nil
			}
		case float64:
			return nil, nil
		default:
			txt := textOf(v)
			if t.kind == "DATE" && canonicalDatetime(txt) {
				if _, _, ok := parseDatetime(txt[:10]); ok {
					return txt[:10], nil
				}
				return nil, nil
			}
			var ok bool
			if tm, _, ok = parseDatetime(txt); !ok {
				return nil, nil
			}
		}
		if t.kind == "DATE" {
			return tm.Format(time.DateOnly), nil
		}
		return printDatetime(roundDatetime(tm, t.scale), t.scale), nil
	case "DOUBLE":
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(textOf(v)), 64)
		if err != nil {
			return nil, nil
		}
		return f, nil
	case "INT":
		var f float64
		switch x := v.(type) {
		case int64:
			return fitInt(x, t.bits), nil
		case float64:
			f = x
		default:
			s := strings.TrimSpace(textOf(v))
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return fitInt(n, t.bits), nil
			}
			var err error
			if f, err = strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "eExXpP_") {
				return nil, nil
			}
		}
		f = math.Trunc(f)
		if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
			return nil, nil
		}
		return fitInt(int64(f), t.bits), nil
	case "DECIMAL":
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		default:
			var err error
			s := strings.TrimSpace(textOf(v))
			if f, err = strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "xXpP_") {
				return nil, nil
			}
		}
		r := roundHalfAway(f, t.scale)
		if math.Abs(r) >= math.Pow10(t.prec-t.scale) {
			return nil, nil
		}
		if r == math.Trunc(r) && math.Abs(r) < 1<<53 {
			return int64(r), nil
		}
		return r, nil
	}
	return nil, fmt.Errorf("CAST(... AS %s) is not supported by the emulator", target)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// fitInt is n when it fits in a signed integer of bits, else NULL.
func fitInt(n int64, bits int) any {
	if bits < 64 {
		limit := int64(1) << (bits - 1)
		if n >= limit || n < -limit {
			return nil
		}
	}
	return n
}

// roundHalfAway rounds f to scale decimals, half away from zero (Doris's
// DECIMAL rounding), through its shortest decimal text so that 1.005 rounds
// to 1.01 as its literal says.
func roundHalfAway(f float64, scale int) float64 {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	if len(frac) <= scale {
		return f
	}
	keep := intPart + frac[:scale]
	up := frac[scale] >= '5'
	n, err := strconv.ParseInt(keep, 10, 64)
	if err != nil {
		p := math.Pow10(scale)
		return math.Round(f*p) / p
	}
	if up {
		n++
	}
	r := float64(n) / math.Pow10(scale)
	if neg {
		r = -r
	}
	return r
}

// truncateNumber is TRUNCATE(x, d): x cut (toward zero) to d decimals.
func truncateNumber(v any, d int64) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		if d >= 0 {
			return x
		}
		p := int64(math.Pow10(int(-d)))
		return x / p * p
	}
	f, ok := toNumber(v)
	if !ok {
		return nil
	}
	if d >= 0 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > int(d) {
			s = s[:i+1+int(d)]
		}
		r, _ := strconv.ParseFloat(s, 64)
		return r
	}
	p := math.Pow10(int(-d))
	return math.Trunc(f/p) * p
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// datetimeArg reads a function's date or date-time argument; ok is false for
// NULL or a value that is not one (the function answers NULL).
func datetimeArg(v any) (t time.Time, scale int, ok bool) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, 0, false
	case int64:
		t, _, ok = parseDatetime(strconv.FormatInt(x, 10))
		return t, 0, ok
	}
	s := textOf(v)
	t, _, ok = parseDatetime(s)
	if i := strings.IndexByte(s, '.'); ok && i >= 0 {
		scale = len(strings.TrimSpace(s[i+1:]))
	}
	return t, scale, ok
}

// dateFormat is MySQL's / Doris's DATE_FORMAT specifiers.
func dateFormat(t time.Time, f string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 == len(f) {
			b.WriteByte(c)
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'c':
			fmt.Fprintf(&b, "%d", int(t.Month()))
		case 'M':
			b.WriteString(t.Month().String())
		case 'b':
			b.WriteString(t.Month().String()[:3])
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'k':
			fmt.Fprintf(&b, "%d", t.Hour())
		case 'h', 'I':
			fmt.Fprintf(&b, "%02d", (t.Hour()+11)%12+1)
		case 'l':
			fmt.Fprintf(&b, "%d", (t.Hour()+11)%12+1)
		case 'i':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 's', 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'T':
			fmt.Fprintf(&b, "%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
		case 'r':
			am := "AM"
			if t.Hour() >= 12 {
				am = "PM"
			}
			fmt.Fprintf(&b, "%02d:%02d:%02d %s", (t.Hour()+11)%12+1, t.Minute(), t.Second(), am)
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'W':
			b.WriteString(t.Weekday().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'w':
			fmt.Fprintf(&b, "%d", int(t.Weekday()))
		case 'u':
			_, w := t.ISOWeek()
			fmt.Fprintf(&b, "%02d", w)
		case 'v':
			_, w := t.ISOWeek()
			fmt.Fprintf(&b, "%02d", w)
		case 'x':
			y, _ := t.ISOWeek()
			fmt.Fprintf(&b, "%04d", y)
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// strToDate is STR_TO_DATE(s, format) for the numeric specifiers %Y %y %m
// %c %d %e %H %k %h %l %i %s %S %f %p and literal text; hasTime is false
// when the format names no time part (Doris then answers a DATE).
func strToDate(s, f string) (t time.Time, hasTime, ok bool) {
	y, mo, d, hh, mi, ss, ns := 0, 1, 1, 0, 0, 0, 0
	pm, hasPM := false, false
	j := 0
	num := func(max int) (int, bool) {
		k := j
		for k < len(s) && k-j < max && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			return 0, false
		}
		n, _ := strconv.Atoi(s[j:k])
		j = k
		return n, true
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			if j >= len(s) || s[j] != f[i] {
				return time.Time{}, false, false
			}
			j++
			continue
		}
		i++
		var good bool
		switch f[i] {
		case 'Y':
			y, good = num(4)
		case 'y':
			y, good = num(2)
			if y < 70 {
				y += 2000
			} else {
				y += 1900
			}
		case 'm', 'c':
			mo, good = num(2)
		case 'd', 'e':
			d, good = num(2)
		case 'H', 'k', 'h', 'l', 'I':
			hh, good = num(2)
			hasTime = true
		case 'i':
			mi, good = num(2)
			hasTime = true
		case 's', 'S':
			ss, good = num(2)
			hasTime = true
		case 'f':
			k := j
			var n int
			n, good = num(6)
			for w := j - k; w < 6; w++ {
				n *= 10
			}
			ns = n * 1000
			hasTime = true
		case 'p':
			if j+2 <= len(s) {
				switch strings.ToUpper(s[j : j+2]) {
				case "AM":
					good, hasPM = true, true
				case "PM":
					good, hasPM, pm = true, true, true
				}
				j += 2
			}
		case '%':
			good = j < len(s) && s[j] == '%'
			j++
		default:
			return time.Time{}, false, false
		}
		if !good {
			return time.Time{}, false, false
		}
	}
	if hasPM {
		hh %= 12
		if pm {
			hh += 12
		}
	}
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 59 {
		return time.Time{}, false, false
	}
	t = time.Date(y, time.Month(mo), d, hh, mi, ss, ns, time.UTC)
	if t.Day() != d {
		return time.Time{}, false, false
	}
	return t, hasTime, true
}

// dateTrunc is DATE_TRUNC(t, unit).
func dateTrunc(t time.Time, unit string) (time.Time, bool) {
	switch strings.ToLower(unit) {
	case "second":
		return t.Truncate(time.Second), true
	case "minute":
		return t.Truncate(time.Minute), true
	case "hour":
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, time.UTC), true
	case "day":
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), true
	case "week":
		wd := (int(t.Weekday()) + 6) % 7 // Monday first
		return time.Date(t.Year(), t.Month(), t.Day()-wd, 0, 0, 0, 0, time.UTC), true
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC), true
	case "quarter":
		m := (int(t.Month())-1)/3*3 + 1
		return time.Date(t.Year(), time.Month(m), 1, 0, 0, 0, 0, time.UTC), true
	case "year":
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC), true
	}
	return time.Time{}, false
}

// CheckCastTarget reports whether CAST(x AS target) is one the engine
// converts with Doris's semantics; the error says which target is not.
func CheckCastTarget(target string) error {
	_, err := parseCastTarget(target)
	return err
}

// FormatDate prints the text s of a date or date-time as a DATE
// ("2024-01-02"); text that is neither is returned unchanged.
func FormatDate(s string) string {
	t, _, ok := parseDatetime(s)
	if !ok {
		return s
	}
	return t.Format(time.DateOnly)
}

// ParseDatetime reads the text of a DATE or DATETIME value; ok is false for
// other text.
func ParseDatetime(s string) (t time.Time, ok bool) {
	t, _, ok = parseDatetime(s)
	return t, ok
}
