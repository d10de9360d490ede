package sqlexec

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Type mapping from a Doris column type to the type declared in SQLite. The
// declared type decides SQLite's column affinity (https://sqlite.org/datatype3.html
// §3.1) and comes back as the result column's declared type, from which
// DorisType recovers the Doris type (for the MySQL column definition) and
// formatValue the printing:
//
//	TINYINT SMALLINT INT INTEGER BIGINT  → same name             INTEGER affinity
//	BOOLEAN                              → BOOLEAN               NUMERIC (0/1)
//	LARGEINT                             → BLOB DORIS_I128        none: int64 when it fits, else text
//	FLOAT DOUBLE                         → same name             REAL
//	DECIMAL[V2|V3](p,s)                  → DECIMAL(p,s)          NUMERIC; printed with s decimals
//	CHAR(n) VARCHAR(n)                   → same                  TEXT
//	STRING TEXT                          → TEXT DORIS_STRING     TEXT
//	DATE DATEV2                          → TEXT DORIS_DATE       TEXT, collation doris_datetime
//	DATETIME[V2][(p)]                    → TEXT DORIS_DATETIME(p) TEXT, collation doris_datetime
//	JSON JSONB VARIANT IPV4 IPV6         → TEXT DORIS_<name>     TEXT
//	anything else (ARRAY<…>, MAP<…>, HLL, BITMAP, …) → BLOB DORIS_<name> (values kept as given)
//
// The DORIS_ markers never contain INT, CHAR, CLOB, TEXT, BLOB, REAL, FLOA or
// DOUB, so they do not change the affinity the first word gives. Dates are
// not declared DATE/DATETIME because the modernc driver turns such columns
// into time.Time. Date columns compare through the doris_datetime collation
// (datetime.go), so '2024-06-01' equals '2024-06-01 00:00:00.000' as in
// Doris, where both sides are cast to DATETIME.
func sqliteType(dorisType string) string {
	t := strings.ToUpper(strings.TrimSpace(dorisType))
	base, args := t, ""
	if i := strings.IndexAny(t, "(<"); i >= 0 {
		base, args = strings.TrimSpace(t[:i]), t[i:]
	}
	switch base {
	case "TINYINT", "SMALLINT", "INT", "BIGINT":
		return base
	case "INTEGER":
		return "INT"
	case "BOOLEAN", "BOOL":
		return "BOOLEAN"
	case "LARGEINT":
		return "BLOB DORIS_I128"
	case "FLOAT", "DOUBLE":
		return base
	case "DECIMAL", "DECIMALV2", "DECIMALV3", "NUMERIC", "DECIMAL32", "DECIMAL64", "DECIMAL128", "DECIMAL128I", "DECIMAL256":
		p, s := decimalArgs(args)
		return fmt.Sprintf("DECIMAL(%d,%d)", p, s)
	case "CHAR", "VARCHAR":
		return t
	case "STRING", "TEXT":
		return "TEXT DORIS_STRING"
	case "DATE", "DATEV2":
		return "TEXT DORIS_DATE"
	case "DATETIME", "DATETIMEV2":
		p, _ := decimalArgs(args)
		if args == "" {
			p = 0
		}
		return fmt.Sprintf("TEXT DORIS_DATETIME(%d)", p)
	case "JSON", "JSONB":
		return "TEXT DORIS_JSON"
	case "VARIANT", "IPV4", "IPV6":
		return "TEXT DORIS_" + base
	}
	if base == "" {
		return "BLOB"
	}
	return "BLOB DORIS_" + strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r == '_' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, base)
}

// DorisType returns the Doris type of a result column from its SQLite
// declared type (sqliteType's output), "" when the column is not a plain
// column reference (an expression, an aggregate: SQLite declares no type).
func DorisType(decl string) string {
	d := strings.ToUpper(strings.TrimSpace(decl))
	switch {
	case d == "":
		return ""
	case strings.HasPrefix(d, "TEXT DORIS_"):
		return strings.TrimPrefix(d, "TEXT DORIS_")
	case d == "BLOB DORIS_I128":
		return "LARGEINT"
	case strings.HasPrefix(d, "BLOB DORIS_"):
		return strings.TrimPrefix(d, "BLOB DORIS_")
	case d == "TEXT":
		return "STRING"
	case d == "BLOB":
		return ""
	}
	return d
}

// decimalArgs parses "(p,s)", "(p)" or "": a missing scale is 0 and a missing
// precision 9, Doris's DECIMAL defaults.
func decimalArgs(args string) (precision, scale int) {
	precision, scale = 9, 0
	args = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(args), "("), ")")
	if args == "" {
		return precision, scale
	}
	parts := strings.Split(args, ",")
	if p, err := strconv.Atoi(strings.TrimSpace(parts[0])); err == nil {
		precision = p
	}
	if len(parts) > 1 {
		if s, err := strconv.Atoi(strings.TrimSpace(parts[1])); err == nil {
			scale = s
		}
	}
	return precision, scale
}

// storeValue converts a row value from Table.Rows to what is bound in the
// INSERT for a column declared declType.
func storeValue(v any, declType string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64, float64, string:
		if s, ok := x.(string); ok && declType == "BLOB DORIS_I128" {
			// LARGEINT arrives as text: keep it numeric when it fits.
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return strconv.FormatUint(x, 10)
		}
		return int64(x)
	case float32:
		return float64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case []byte:
		return string(x)
	case *big.Int:
		return storeValue(x.String(), declType)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999")
	default:
		return fmt.Sprint(x)
	}
}

// formatValue turns a value scanned from SQLite into a Result value (nil,
// int64, float64 or string) the way Doris prints it. declType is the result
// column's declared type: set only when the column is a plain reference to a
// table column (possibly through a view or subquery).
//
//   - DECIMAL(p,s) columns print with exactly s decimals, as text.
//   - Other REAL values without a declared type (SUM, AVG, arithmetic) are
//     rounded to 15 significant digits, hiding binary floating-point noise
//     that Doris's exact DECIMAL arithmetic would not show (0.1+0.2 → 0.3).
func formatValue(v any, declType string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return string(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		return x.Format(time.DateTime)
	case int64:
		if _, s, ok := declaredDecimal(declType); ok {
			return formatDecimal(float64(x), x, true, s)
		}
		return x
	case float64:
		if _, s, ok := declaredDecimal(declType); ok {
			return formatDecimal(x, 0, false, s)
		}
		if declType == "" {
			return round15(x)
		}
		return x
	case string:
		if p, ok := declaredDatetime(declType); ok {
			return FormatDatetime(x, p)
		}
		return x
	default:
		return fmt.Sprint(x)
	}
}

// declaredDatetime reports the fraction digits of a DATETIME(p) column.
func declaredDatetime(declType string) (int, bool) {
	if !strings.HasPrefix(declType, "TEXT DORIS_DATETIME") {
		return 0, false
	}
	p, _ := decimalArgs(strings.TrimPrefix(declType, "TEXT DORIS_DATETIME"))
	return p, true
}

func declaredDecimal(declType string) (precision, scale int, ok bool) {
	if !strings.HasPrefix(declType, "DECIMAL") {
		return 0, 0, false
	}
	p, s := decimalArgs(strings.TrimPrefix(declType, "DECIMAL"))
	return p, s, true
}

func formatDecimal(f float64, i int64, isInt bool, scale int) string {
	if isInt {
		s := strconv.FormatInt(i, 10)
		if scale > 0 {
			s += "." + strings.Repeat("0", scale)
		}
		return s
	}
	return strconv.FormatFloat(f, 'f', scale, 64)
}

func round15(f float64) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		return f
	}
	return r
}
