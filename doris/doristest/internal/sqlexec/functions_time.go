package sqlexec

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// CastFunction is the SQL function the MySQL front rewrites
// CAST(x AS DATE|DATETIME[(p)]|DECIMAL(p,s)|integer|DOUBLE|VARCHAR) and the
// DATE '…' / TIMESTAMP '…' literals into: doris_cast(x, 'type') converts as
// Doris's CAST does (dorisCast), where SQLite's CAST would read
// '2024-01-02 03:04:05' AS an integer prefix (2024).
const CastFunction = "doris_cast"

// timeFunctions are Doris's date, number and approximate-aggregate functions
// that SQLite lacks or has with another meaning. Dates are text in Doris's
// printed form (datetime.go); a NULL or malformed date argument gives NULL.
//
//   - DATE_FORMAT(dt, fmt), STR_TO_DATE(s, fmt): MySQL format specifiers.
//   - DATE_TRUNC(dt, unit) (also DATE_TRUNC(unit, dt)): second … year.
//   - YEAR, QUARTER, MONTH, DAY/DAYOFMONTH, HOUR, MINUTE, SECOND,
//     DAYOFWEEK (1 = Sunday), DAYOFYEAR; DATE/TO_DATE(dt) → DATE.
//   - FROM_UNIXTIME(n[, fmt]), UNIX_TIMESTAMP([dt]): UTC, the emulator's
//     time_zone; UNIX_TIMESTAMP of a date-time with a fraction is refused
//     (Doris answers a DECIMAL).
//   - TRUNCATE(x, d): x cut toward zero to d decimals.
//   - APPROX_COUNT_DISTINCT(x): aggregate; exact distinct count (Doris's
//     HLL estimate is exact at the small cardinalities of tests, but not in
//     general).
func timeFunctions() map[string]*sqlite.FunctionImpl {
	part := func(f func(time.Time) int64) *sqlite.FunctionImpl {
		return &sqlite.FunctionImpl{NArgs: 1, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			t, _, ok := datetimeArg(a[0])
			if !ok {
				return nil, nil
			}
			return f(t), nil
		}}
	}
	toDate := &sqlite.FunctionImpl{NArgs: 1, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		t, _, ok := datetimeArg(a[0])
		if !ok {
			return nil, nil
		}
		return t.Format(time.DateOnly), nil
	}}
	fromUnix := func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		n, ok := toNumber(a[0])
		if !ok || a[0] == nil {
			return nil, nil
		}
		t := time.Unix(int64(n), 0).UTC()
		if len(a) > 1 {
			if a[1] == nil {
				return nil, nil
			}
			return dateFormat(t, textOf(a[1])), nil
		}
		return t.Format(time.DateTime), nil
	}
	return map[string]*sqlite.FunctionImpl{
		CastFunction: {NArgs: 2, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			return dorisCast(a[0], textOf(a[1]))
		}},
		"date_format": {NArgs: 2, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			t, _, ok := datetimeArg(a[0])
			if !ok || a[1] == nil {
				return nil, nil
			}
			return dateFormat(t, textOf(a[1])), nil
		}},
		"str_to_date": {NArgs: 2, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			if a[0] == nil || a[1] == nil {
				return nil, nil
			}
			t, hasTime, ok := strToDate(textOf(a[0]), textOf(a[1]))
			if !ok {
				return nil, nil
			}
			if !hasTime {
				return t.Format(time.DateOnly), nil
			}
			if t.Nanosecond() != 0 {
				return printDatetime(t, 6), nil
			}
			return t.Format(time.DateTime), nil
		}},
		"date_trunc": {NArgs: 2, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			dt, unit := a[0], a[1]
			if _, _, ok := datetimeArg(dt); !ok {
				dt, unit = a[1], a[0]
			}
			t, scale, ok := datetimeArg(dt)
			if !ok || unit == nil {
				return nil, nil
			}
			r, ok := dateTrunc(t, textOf(unit))
			if !ok {
				return nil, fmt.Errorf("date_trunc: unit %q is not one of second, minute, hour, day, week, month, quarter, year", textOf(unit))
			}
			return printDatetime(r, scale), nil
		}},
		"year":       part(func(t time.Time) int64 { return int64(t.Year()) }),
		"quarter":    part(func(t time.Time) int64 { return int64((t.Month()-1)/3 + 1) }),
		"month":      part(func(t time.Time) int64 { return int64(t.Month()) }),
		"day":        part(func(t time.Time) int64 { return int64(t.Day()) }),
		"dayofmonth": part(func(t time.Time) int64 { return int64(t.Day()) }),
		"hour":       part(func(t time.Time) int64 { return int64(t.Hour()) }),
		"minute":     part(func(t time.Time) int64 { return int64(t.Minute()) }),
		"second":     part(func(t time.Time) int64 { return int64(t.Second()) }),
		"dayofweek":  part(func(t time.Time) int64 { return int64(t.Weekday()) + 1 }),
		"dayofyear":  part(func(t time.Time) int64 { return int64(t.YearDay()) }),
		"to_date":    toDate,
		"from_unixtime": {NArgs: -1, Deterministic: true, Scalar: func(c *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			if len(a) < 1 || len(a) > 2 {
				return nil, fmt.Errorf("from_unixtime takes 1 or 2 arguments, got %d", len(a))
			}
			return fromUnix(c, a)
		}},
		"unix_timestamp": {NArgs: -1, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			switch len(a) {
			case 0:
				return time.Now().Unix(), nil
			case 1:
				t, scale, ok := datetimeArg(a[0])
				if !ok {
					return nil, nil
				}
				if scale > 0 {
					// Doris (UnixTimestamp) answers a DATETIME(p>0) with a
					// DECIMAL keeping the fraction; the emulator types
					// UNIX_TIMESTAMP as INT, so it refuses.
					return nil, fmt.Errorf("%sUNIX_TIMESTAMP of a date-time with fractional seconds (%s): Doris answers a DECIMAL with the fraction", NotEmulatedPrefix, textOf(a[0]))
				}
				return t.Unix(), nil
			}
			return nil, fmt.Errorf("unix_timestamp takes 0 or 1 arguments, got %d", len(a))
		}},
		"truncate": {NArgs: 2, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			d, ok := toNumber(a[1])
			if !ok || a[1] == nil {
				return nil, nil
			}
			return truncateNumber(a[0], int64(d)), nil
		}},
		"approx_count_distinct": {NArgs: 1, MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &distinctAgg{seen: map[string]bool{}}, nil
		}},
	}
}

// distinctAgg counts distinct non-NULL values.
type distinctAgg struct{ seen map[string]bool }

func (a *distinctAgg) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if args[0] == nil {
		return nil
	}
	k := fmt.Sprintf("%T:", args[0]) + textOf(args[0])
	if f, ok := args[0].(float64); ok && f == float64(int64(f)) {
		k = "int64:" + strconv.FormatInt(int64(f), 10)
	}
	a.seen[strings.Clone(k)] = true
	return nil
}

func (a *distinctAgg) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("approx_count_distinct cannot be used as a window function")
}

func (a *distinctAgg) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	return int64(len(a.seen)), nil
}

func (a *distinctAgg) Final(*sqlite.FunctionContext) {}
