package sqlexec

import (
	"reflect"
	"testing"
)

func TestSQLiteType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"BIGINT": "BIGINT", "int": "INT", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT",
		"LARGEINT": "BLOB DORIS_I128", "BOOLEAN": "BOOLEAN", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE",
		"DECIMAL(12,2)": "DECIMAL(12,2)", "DECIMALV3(38, 9)": "DECIMAL(38,9)", "DECIMAL": "DECIMAL(9,0)",
		"DECIMAL(10)": "DECIMAL(10,0)", "CHAR(4)": "CHAR(4)", "VARCHAR(16)": "VARCHAR(16)",
		"STRING": "TEXT DORIS_STRING", "TEXT": "TEXT DORIS_STRING", "DATE": "TEXT DORIS_DATE",
		"DATETIME": "TEXT DORIS_DATETIME(0)", "DATETIME(3)": "TEXT DORIS_DATETIME(3)",
		"DATEV2": "TEXT DORIS_DATE", "JSON": "TEXT DORIS_JSON", "ARRAY<INT>": "BLOB DORIS_ARRAY", "BITMAP": "BLOB DORIS_BITMAP",
	} {
		if got := sqliteType(in); got != want {
			t.Errorf("sqliteType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    any
		decl string
		want any
	}{
		{nil, "DECIMAL(12,2)", nil},
		{int64(12), "DECIMAL(12,2)", "12.00"},
		{12.5, "DECIMAL(12,2)", "12.50"},
		{0.125, "DECIMAL(10,3)", "0.125"},
		{int64(7), "DECIMAL(9,0)", "7"},
		{int64(7), "BIGINT", int64(7)},
		{0.1 + 0.2, "", 0.3},
		{0.1 + 0.2, "DOUBLE", 0.1 + 0.2},
		{[]byte("b"), "BLOB", "b"},
		{"x", "TEXT", "x"},
		{true, "", int64(1)},
		{"2024-01-02 03:04:05", "TEXT DORIS_DATETIME(3)", "2024-01-02 03:04:05.000"},
		{"2024-01-02", "TEXT DORIS_DATE", "2024-01-02"},
	}
	for _, tc := range tests {
		if got := formatValue(tc.v, tc.decl); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("formatValue(%#v, %q) = %#v, want %#v", tc.v, tc.decl, got, tc.want)
		}
	}
}

func TestTypesEndToEnd(t *testing.T) {
	t.Parallel()
	f := newFake("demo", "types", [][2]string{
		{"li", "LARGEINT"}, {"b", "BOOLEAN"}, {"d", "DOUBLE"}, {"dec", "DECIMALV3(20,4)"},
		{"dt", "DATETIME(3)"}, {"j", "JSON"}, {"c", "CHAR(2)"},
	},
		row("170141183460469231731687303715884105727", int64(1), 1.5, "1.2300", "2024-01-02 03:04:05.678", `{"a":1}`, "ab"),
		row("42", int64(0), nil, "-0.5000", "2024-01-02 00:00:00.000", nil, nil),
	)
	e := newEngine(t)
	res := mustQuery(t, e, "demo", tablesOf(f), "SELECT * FROM types ORDER BY b DESC")
	wantRows(t, res, [][]any{
		row("170141183460469231731687303715884105727", int64(1), 1.5, "1.2300", "2024-01-02 03:04:05.678", `{"a":1}`, "ab"),
		row(int64(42), int64(0), nil, "-0.5000", "2024-01-02 00:00:00.000", nil, nil),
	})
	res = mustQuery(t, e, "demo", tablesOf(f), "SELECT COUNT(*) FROM types WHERE li = 42 AND dec < 0 AND b")
	wantRows(t, res, [][]any{row(int64(0))})
	res = mustQuery(t, e, "demo", tablesOf(f), "SELECT COUNT(*) FROM types WHERE li = 42 AND dec < 0 AND NOT b")
	wantRows(t, res, [][]any{row(int64(1))})
}

func TestDorisType(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"BIGINT", "TINYINT", "LARGEINT", "DECIMAL(12,2)", "VARCHAR(16)", "STRING",
		"DATE", "DATETIME(3)", "DATETIME", "JSON", "BOOLEAN", "DOUBLE", "ARRAY<INT>"} {
		want := map[string]string{"DATETIME": "DATETIME(0)", "ARRAY<INT>": "ARRAY"}[in]
		if want == "" {
			want = in
		}
		if got := DorisType(sqliteType(in)); got != want {
			t.Errorf("DorisType(sqliteType(%q)) = %q, want %q", in, got, want)
		}
	}
}
