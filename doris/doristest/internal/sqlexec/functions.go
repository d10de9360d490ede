package sqlexec

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// failFunction is the internal function the "table not in the current
// database" views call (names.go); it fails the statement with its argument.
const failFunction = "doris_sqlexec_fail"

// dialectFunctions are the Doris/MySQL functions SQLite lacks:
//
//   - MAX_BY(v, k), MIN_BY(v, k): aggregates, v at the row where k is
//     largest / smallest; rows with a NULL k are skipped; on ties the first
//     row seen wins.
//   - ANY_VALUE(v): aggregate, the first non-NULL v.
//   - CONCAT(a, ...): NULL when any argument is NULL (MySQL semantics, unlike
//     SQLite's concat which skips NULLs).
//   - CONCAT_WS(sep, a, ...): skips NULL arguments.
//   - NVL(a, b): IFNULL.
//   - NOW(), CURDATE(): local time as 'YYYY-MM-DD HH:MM:SS' / 'YYYY-MM-DD'.
//
// SQLite already has IFNULL, COALESCE, IF/IIF, GROUP_CONCAT (without
// MySQL's SEPARATOR clause), ABS, ROUND, LOWER, UPPER, SUBSTR, REPLACE, TRIM.
// Date and number functions are in functions_time.go.
func dialectFunctions() map[string]*sqlite.FunctionImpl {
	return map[string]*sqlite.FunctionImpl{
		"max_by": {NArgs: 2, MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &byAgg{name: "max_by", sign: 1}, nil
		}},
		"min_by": {NArgs: 2, MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &byAgg{name: "min_by", sign: -1}, nil
		}},
		"any_value": {NArgs: 1, MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &anyValueAgg{}, nil }},
		"concat":    {NArgs: -1, Deterministic: true, Scalar: concat},
		"concat_ws": {NArgs: -1, Deterministic: true, Scalar: concatWS},
		"nvl": {NArgs: 2, Deterministic: true, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			if a[0] != nil {
				return a[0], nil
			}
			return a[1], nil
		}},
		"now": {NArgs: 0, Scalar: func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
			return time.Now().Format(time.DateTime), nil
		}},
		"curdate": {NArgs: 0, Scalar: func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
			return time.Now().Format(time.DateOnly), nil
		}},
		failFunction: {NArgs: 1, Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
			return nil, errors.New(textOf(a[0]))
		}},
	}
}

// byAgg implements MAX_BY (sign 1) and MIN_BY (sign -1).
type byAgg struct {
	name  string
	sign  int
	seen  bool
	value driver.Value
	key   driver.Value
}

func (a *byAgg) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if args[1] == nil {
		return nil
	}
	if !a.seen || a.sign*compareValues(args[1], a.key) > 0 {
		a.seen, a.value, a.key = true, args[0], args[1]
	}
	return nil
}

func (a *byAgg) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return fmt.Errorf("%s cannot be used as a window function", a.name)
}

func (a *byAgg) WindowValue(*sqlite.FunctionContext) (driver.Value, error) { return a.value, nil }

func (a *byAgg) Final(*sqlite.FunctionContext) {}

// anyValueAgg implements ANY_VALUE.
type anyValueAgg struct{ value driver.Value }

func (a *anyValueAgg) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if a.value == nil {
		a.value = args[0]
	}
	return nil
}

func (a *anyValueAgg) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("any_value cannot be used as a window function")
}

func (a *anyValueAgg) WindowValue(*sqlite.FunctionContext) (driver.Value, error) { return a.value, nil }

func (a *anyValueAgg) Final(*sqlite.FunctionContext) {}

func concat(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	var b strings.Builder
	for _, v := range args {
		if v == nil {
			return nil, nil
		}
		b.WriteString(textOf(v))
	}
	return b.String(), nil
}

func concatWS(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) == 0 {
		return nil, errors.New("concat_ws needs a separator argument")
	}
	if args[0] == nil {
		return nil, nil
	}
	sep := textOf(args[0])
	parts := make([]string, 0, len(args)-1)
	for _, v := range args[1:] {
		if v != nil {
			parts = append(parts, textOf(v))
		}
	}
	return strings.Join(parts, sep), nil
}

// textOf renders a SQLite value as text the way CONCAT does.
func textOf(v driver.Value) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.Format(time.DateTime)
	default:
		return fmt.Sprint(x)
	}
}

// compareValues orders two non-NULL SQLite values the way SQLite does:
// numbers before text before blobs; numbers numerically, text bytewise.
func compareValues(a, b driver.Value) int {
	ca, cb := valueClass(a), valueClass(b)
	if ca != cb {
		return ca - cb
	}
	switch ca {
	case 1:
		ia, aInt := a.(int64)
		ib, bInt := b.(int64)
		if aInt && bInt {
			return cmp3(ia < ib, ia > ib)
		}
		fa, fb := toFloat(a), toFloat(b)
		return cmp3(fa < fb, fa > fb)
	default:
		return strings.Compare(textOf(a), textOf(b))
	}
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

func valueClass(v driver.Value) int {
	switch v.(type) {
	case int64, float64, bool:
		return 1
	case string, time.Time:
		return 2
	default:
		return 3
	}
}

func toFloat(v driver.Value) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
	}
	return 0
}
