package table

import (
	"fmt"
	"strconv"
	"strings"
)

// kind is the emulator's storage class of a Doris column type.
type kind int

const (
	kInt      kind = iota // TINYINT..BIGINT → int64
	kLargeInt             // LARGEINT → decimal string
	kBool                 // BOOLEAN → int64 0/1
	kFloat                // FLOAT/DOUBLE → float64
	kDecimal              // DECIMAL(p,s) → canonical string with s fraction digits
	kDate                 // DATE → "2006-01-02"
	kDateTime             // DATETIME(n) → "2006-01-02 15:04:05[.f]"
	kString               // CHAR/VARCHAR/STRING/TEXT and opaque types → string
	kJSON                 // JSON/JSONB → compact JSON text
)

// colType is a parsed Doris column type.
type colType struct {
	raw       string
	kind      kind
	bits      uint // integer width
	prec      int  // DECIMAL precision
	scale     int  // DECIMAL scale / DATETIME fraction digits
	maxLen    int  // CHAR/VARCHAR byte length; 0 = unbounded
	isFloat32 bool
}

// parseColType parses the upper-case type text of a schema column. Types the
// emulator cannot hold (HLL, BITMAP, QUANTILE_STATE, AGG_STATE) are errors;
// complex types (ARRAY, MAP, STRUCT, VARIANT, IPV4/6) are held as opaque text.
func parseColType(s string) (colType, error) {
	t := colType{raw: s}
	u := strings.ToUpper(strings.TrimSpace(s))
	base, args := u, []int(nil)
	if i := strings.IndexByte(u, '('); i >= 0 && !strings.HasPrefix(u, "ARRAY") &&
		!strings.HasPrefix(u, "MAP") && !strings.HasPrefix(u, "STRUCT") {
		base = strings.TrimSpace(u[:i])
		j := strings.LastIndexByte(u, ')')
		if j < i {
			return t, fmt.Errorf("malformed column type %q", s)
		}
		for _, p := range strings.Split(u[i+1:j], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return t, fmt.Errorf("malformed column type %q", s)
			}
			args = append(args, n)
		}
	}
	arg := func(i, def int) int {
		if i < len(args) {
			return args[i]
		}
		return def
	}
	switch base {
	case "TINYINT":
		t.kind, t.bits = kInt, 8
	case "SMALLINT":
		t.kind, t.bits = kInt, 16
	case "INT", "INTEGER":
		t.kind, t.bits = kInt, 32
	case "BIGINT":
		t.kind, t.bits = kInt, 64
	case "LARGEINT":
		t.kind, t.bits = kLargeInt, 128
	case "BOOLEAN", "BOOL":
		t.kind = kBool
	case "FLOAT":
		t.kind, t.isFloat32 = kFloat, true
	case "DOUBLE":
		t.kind = kFloat
	case "DECIMAL", "DECIMALV2", "DECIMALV3", "DECIMAL32", "DECIMAL64", "DECIMAL128", "DECIMAL128I", "DECIMAL256":
		t.kind = kDecimal
		// Doris defaults: DECIMAL = DECIMAL(9,0) for V3 (DECIMALV2 default (9,0) too).
		t.prec, t.scale = arg(0, 9), arg(1, 0)
		if t.prec < 1 || t.prec > 76 || t.scale < 0 || t.scale > t.prec {
			return t, fmt.Errorf("invalid decimal type %q", s)
		}
	case "DATE", "DATEV2":
		t.kind = kDate
	case "DATETIME", "DATETIMEV2":
		t.kind, t.scale = kDateTime, arg(0, 0)
		if t.scale < 0 || t.scale > 6 {
			return t, fmt.Errorf("invalid datetime type %q", s)
		}
	case "CHAR":
		t.kind, t.maxLen = kString, arg(0, 1)
	case "VARCHAR":
		t.kind, t.maxLen = kString, arg(0, 65533)
	case "STRING", "TEXT":
		t.kind = kString
	case "JSON", "JSONB":
		t.kind = kJSON
	case "HLL", "BITMAP", "QUANTILE_STATE", "AGG_STATE":
		return t, fmt.Errorf("column type %s is not emulated by doristest", base)
	default:
		if strings.HasPrefix(base, "ARRAY") || strings.HasPrefix(base, "MAP") ||
			strings.HasPrefix(base, "STRUCT") || base == "VARIANT" || base == "IPV4" || base == "IPV6" {
			t.kind = kString // opaque text, not validated
			return t, nil
		}
		return t, fmt.Errorf("unknown column type %q", s)
	}
	return t, nil
}

// isNumeric reports whether values of t compare as numbers.
func (t colType) isNumeric() bool {
	switch t.kind {
	case kInt, kLargeInt, kBool, kFloat, kDecimal:
		return true
	}
	return false
}
