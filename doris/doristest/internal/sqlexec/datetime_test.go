package sqlexec

import (
	"reflect"
	"testing"
)

// doris_cast follows Doris's non-strict CAST (docs/doris-facts.md §14.3): a
// value that does not convert or does not fit is NULL.
func TestDorisCast(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v      any
		target string
		want   any
	}{
		{"2024-01-02 03:04:05", "DATETIME", "2024-01-02 03:04:05"},
		{"2024-01-02", "DATETIME(3)", "2024-01-02 00:00:00.000"},
		{"2024-01-02 03:04:05.123456", "DATETIME(3)", "2024-01-02 03:04:05.123"},
		{"2024-01-02 03:04:05", "DATE", "2024-01-02"},
		{int64(20240102), "DATE", "2024-01-02"},
		{"2024-02-30", "DATE", nil},
		{"not a date", "DATETIME", nil},
		{1.5, "DECIMAL(10,2)", 1.5},
		{1.005, "DECIMAL(10,2)", 1.01},
		{"-2.345", "DECIMAL(10,2)", -2.35},
		{int64(123456), "DECIMAL(5,2)", nil},
		{"12abc", "INT", nil},
		{"12.7", "INT", int64(12)},
		{int64(300), "TINYINT", nil},
		{int64(-128), "TINYINT", int64(-128)},
		{int64(7), "VARCHAR(10)", "7"},
		{"2.5", "DOUBLE", 2.5},
		{nil, "DATE", nil},
		{"true", "BOOLEAN", int64(1)},
		{int64(0), "BOOLEAN", int64(0)},
		{"maybe", "BOOLEAN", nil},
	} {
		got, err := dorisCast(tc.v, tc.target)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("dorisCast(%#v, %q) = %#v, %v; want %#v", tc.v, tc.target, got, err, tc.want)
		}
	}
	if _, err := dorisCast(int64(1), "BITMAP"); err == nil {
		t.Error("CAST AS BITMAP accepted")
	}
}

// The doris_datetime collation compares dates and date-times by value.
func TestCompareDatetime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2024-06-01", "2024-06-01 00:00:00", 0},
		{"2024-06-01 00:00:00.000", "2024-06-01 00:00:00", 0},
		{"2024-06-01 00:00:00.001", "2024-06-01 00:00:00", 1},
		{"2024-05-31 23:59:59", "2024-06-01", -1},
		{"abc", "abd", -1},
		{"2024-6-1", "2024-06-01 00:00:00", 0},
		{"2024-06-01 00:00:00", "2024-06-01 00:00:00.000100", -1},
	} {
		if got := compareDatetime(tc.a, tc.b); got != tc.want {
			t.Errorf("compareDatetime(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestDateFormatAndStrToDate(t *testing.T) {
	t.Parallel()
	tm, _, ok := parseDatetime("2024-06-02 08:09:10.123456")
	if !ok {
		t.Fatal("parse")
	}
	if got := dateFormat(tm, "%Y-%m-%d %H:%i:%s.%f %W %b %j"); got != "2024-06-02 08:09:10.123456 Sunday Jun 154" {
		t.Errorf("dateFormat = %q", got)
	}
	st, hasTime, ok := strToDate("02/06/2024 8:09 PM", "%d/%m/%Y %h:%i %p")
	if !ok || !hasTime || printDatetime(st, 0) != "2024-06-02 20:09:00" {
		t.Errorf("strToDate = %v %v %v", st, hasTime, ok)
	}
	if _, _, ok := strToDate("2024-13-01", "%Y-%m-%d"); ok {
		t.Error("strToDate accepted month 13")
	}
}
