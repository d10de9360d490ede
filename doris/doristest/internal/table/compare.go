package table

import (
	"math/big"
	"strings"
)

// cmpValues compares two stored values of type t: NULL first, numbers
// numerically (DECIMAL and LARGEINT exactly), dates and text byte-wise.
func cmpValues(t colType, a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch t.kind {
	case kInt, kBool:
		x, y := a.(int64), b.(int64)
		return cmpOrdered(x, y)
	case kFloat:
		return cmpOrdered(a.(float64), b.(float64))
	case kDecimal:
		return cmpDecimal(a.(string), b.(string))
	case kLargeInt:
		x, _ := new(big.Int).SetString(a.(string), 10)
		y, _ := new(big.Int).SetString(b.(string), 10)
		return x.Cmp(y)
	}
	return strings.Compare(a.(string), b.(string))
}

func cmpOrdered[T int64 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// cmpDecimal compares two canonical decimal strings of the same scale
// (as produced by formatDecimal) without allocating.
func cmpDecimal(a, b string) int {
	na, nb := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	if na != nb {
		if na {
			return -1
		}
		return 1
	}
	a, b = strings.TrimPrefix(a, "-"), strings.TrimPrefix(b, "-")
	c := 0
	ia, ib := strings.IndexByte(a, '.'), strings.IndexByte(b, '.')
	if ia < 0 {
		ia = len(a)
	}
	if ib < 0 {
		ib = len(b)
	}
	switch {
	case ia != ib:
		c = cmpOrdered(int64(ia), int64(ib))
	default:
		c = strings.Compare(a, b)
	}
	if na {
		return -c
	}
	return c
}

// cmpRows orders rows by the given column indexes, then (if full) by all
// columns.
func cmpRows(types []colType, idx []int, full bool, a, b []any) int {
	for _, i := range idx {
		if c := cmpValues(types[i], a[i], b[i]); c != 0 {
			return c
		}
	}
	if full {
		for i := range types {
			if c := cmpValues(types[i], a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}
