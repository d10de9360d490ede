package table

import (
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Type conversion per column type, NULL-ing in non-strict mode and
// filtering in strict mode (docs/doris-facts.md §1.4 strict_mode, §8).
func TestTypeConversion(t *testing.T) {
	t.Parallel()
	const bad = "<bad>"      // conversion failure: NULL non-strict, filtered strict
	const tooLong = "<long>" // filtered in both modes
	cases := []struct {
		typ, in string
		want    any
	}{
		{"TINYINT", "127", int64(127)},
		{"TINYINT", "128", bad},
		{"TINYINT", "-128", int64(-128)},
		{"SMALLINT", "32768", bad},
		{"INT", " 42 ", int64(42)},
		{"INT", "2147483648", bad},
		{"INT", "1.9", int64(1)},
		{"INT", "abc", bad},
		{"INT", "", bad},
		{"BIGINT", "-9223372036854775808", int64(-9223372036854775808)},
		{"BIGINT", "9223372036854775808", bad},
		{"LARGEINT", "170141183460469231731687303715884105727", "170141183460469231731687303715884105727"},
		{"LARGEINT", "170141183460469231731687303715884105728", bad},
		{"BOOLEAN", "true", int64(1)},
		{"BOOLEAN", "FALSE", int64(0)},
		{"BOOLEAN", "1", int64(1)},
		{"BOOLEAN", "yes", bad},
		{"DOUBLE", "1.5e3", float64(1500)},
		{"DOUBLE", "x", bad},
		{"FLOAT", "0.1", float64(0.1)},
		{"DECIMAL(12,2)", "1.005", "1.01"},
		{"DECIMAL(12,2)", "-1.005", "-1.01"},
		{"DECIMAL(12,2)", "1.004", "1.00"},
		{"DECIMAL(12,2)", "7", "7.00"},
		{"DECIMAL(12,2)", "0.5", "0.50"},
		{"DECIMAL(12,2)", "1e2", "100.00"},
		{"DECIMAL(4,2)", "99.99", "99.99"},
		{"DECIMAL(4,2)", "99.995", bad},
		{"DECIMAL(4,2)", "100", bad},
		{"DECIMALV3(10,0)", "12.5", "13"},
		{"DECIMAL(5,2)", "abc", bad},
		{"DATE", "2024-02-29", "2024-02-29"},
		{"DATE", "2023-02-29", bad},
		{"DATE", "2024-1-5", "2024-01-05"},
		{"DATE", "20240105", "2024-01-05"},
		{"DATE", "2024-01-05 10:11:12", "2024-01-05"},
		{"DATEV2", "2024/01/05", "2024-01-05"},
		{"DATETIME", "2024-01-05 10:11:12", "2024-01-05 10:11:12"},
		{"DATETIME", "2024-01-05T10:11:12.6", "2024-01-05 10:11:13"},
		{"DATETIME(3)", "2024-01-05 10:11:12.1234", "2024-01-05 10:11:12.123"},
		{"DATETIME(6)", "2024-01-05 10:11:12.5", "2024-01-05 10:11:12.500000"},
		{"DATETIME", "2024-01-05", "2024-01-05 00:00:00"},
		{"DATETIME", "2024-01-05 25:00:00", bad},
		{"VARCHAR(3)", "abc", "abc"},
		{"VARCHAR(3)", "abcd", tooLong},
		{"VARCHAR(3)", "éa", "éa"},
		{"VARCHAR(3)", "éé", tooLong}, // 4 bytes
		{"CHAR(2)", "ab", "ab"},
		{"STRING", "anything", "anything"},
		{"JSON", `{"a": 1}`, `{"a":1}`},
		{"JSONB", `{"a"`, bad},
	}
	for _, c := range cases {
		t.Run(c.typ+"/"+c.in, func(t *testing.T) {
			t.Parallel()
			for _, strict := range []bool{false, true} {
				tb := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"), col("v", c.typ))
				h := hdr("column_separator", ",")
				if strict {
					h.Set("strict_mode", "true")
				}
				b := commit(t, tb, h, "1,"+c.in+"\n")
				switch {
				case c.want == bad && strict, c.want == tooLong:
					counts(t, b, 1, 1, 0)
					if len(tb.Rows()) != 0 {
						t.Fatalf("strict=%v: filtered row visible", strict)
					}
				case c.want == bad:
					counts(t, b, 1, 0, 0)
					if v := tb.Rows()[0][1]; v != nil {
						t.Fatalf("non-strict failure became %#v, want NULL", v)
					}
				default:
					counts(t, b, 1, 0, 0)
					if v := tb.Rows()[0][1]; v != c.want {
						t.Fatalf("strict=%v: %q → %#v (%T), want %#v", strict, c.in, v, v, c.want)
					}
				}
			}
		})
	}
}

// Non-strict: a failed conversion into a NOT NULL column filters the row.
func TestConversionNotNull(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT"), col("v", "INT NOT NULL"))
	b := commit(t, tb, hdr("column_separator", ","), "1,x\n2,\\N\n3,3\n")
	counts(t, b, 3, 2, 0)
	if got := tb.Rows(); len(got) != 1 || got[0][1] != int64(3) {
		t.Fatalf("rows %v", got)
	}
	// JSON numbers and strings alike.
	tb = newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "BIGINT"), col("d", "DECIMAL(6,1)"), col("b", "BOOLEAN"))
	b = commit(t, tb, hdr("format", "json"), `{"k":12345678901,"d":1.25,"b":true}`+"\n"+`{"k":"9","d":"2","b":0}`)
	counts(t, b, 2, 0, 0)
	got := tb.Rows()
	if got[0][0] != int64(9) || got[0][1] != "2.0" || got[0][2] != int64(0) ||
		got[1][0] != int64(12345678901) || got[1][1] != "1.3" || got[1][2] != int64(1) {
		t.Fatalf("rows %v", got)
	}
}

// Huge exponents are refused instead of materialised.
func TestHugeExponent(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1e999999999", "1e-999999999", "1e401"} {
		if _, ok := parseDecimalText(s); ok {
			t.Fatalf("%s accepted", s)
		}
	}
	if r, ok := parseDecimalText("1.5e2"); !ok || r.RatString() != "150" {
		t.Fatalf("1.5e2 → %v %v", r, ok)
	}
}
