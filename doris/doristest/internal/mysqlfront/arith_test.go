package mysqlfront

import (
	"strings"
	"testing"
)

// TestCombineArith pins the result types of arithmetic to the Nereids rules
// arith.go cites: Add promotes integers (DataType.promotion) and widens
// DECIMALs by one digit (Add.getDataTypeForDecimalV3), Multiply adds
// precisions and scales, integers divide into DOUBLE (processDivide), a
// string operand counts as DOUBLE; DECIMAL / and % are refused.
func TestCombineArith(t *testing.T) {
	for _, c := range []struct{ a, op, b, want string }{
		{"INT", "+", "INT", "BIGINT"},
		{"BIGINT", "+", "TINYINT", "LARGEINT"},
		{"TINYINT", "+", "TINYINT", "SMALLINT"},
		{"BIGINT", "*", "BIGINT", "BIGINT"},
		{"INT", "/", "INT", "DOUBLE"},
		{"DECIMAL(10,2)", "+", "DECIMAL(10,2)", "DECIMAL(11,2)"},
		{"DECIMAL(10,2)", "-", "DECIMAL(5,4)", "DECIMAL(13,4)"},
		{"DECIMAL(10,2)", "+", "TINYINT", "DECIMAL(11,2)"},
		{"DECIMAL(10,2)", "*", "DECIMAL(2,1)", "DECIMAL(12,3)"},
		{"DECIMAL(10,2)", "*", "DOUBLE", "DOUBLE"},
		{"VARCHAR(16)", "+", "INT", "DOUBLE"},
		{"DATE", "+", "INT", ""},
		{"", "+", "INT", ""},
		{"DECIMAL(38,2)", "/", "BIGINT", refusal},
		{"DECIMAL(38,2)", "%", "INT", refusal},
		{"DECIMAL(30,2)", "*", "DECIMAL(30,2)", refusal},
	} {
		got := combineArith(c.a, c.op, c.b)
		if c.want == refusal {
			if !strings.HasPrefix(got, refusal) {
				t.Errorf("%s %s %s = %q, want a refusal", c.a, c.op, c.b, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s %s %s = %q, want %q", c.a, c.op, c.b, got, c.want)
		}
	}
}

// TestArithPrecedence: arithType folds * / before + -, left to right, and
// treats a sign after an operator word as unary.
func TestArithPrecedence(t *testing.T) {
	ss := &session{}
	for _, c := range []struct{ expr, want string }{
		{"1 + 2 * 3", "LARGEINT"}, // TINYINT + (TINYINT * TINYINT → BIGINT) promotes to LARGEINT
		{"1.5 * 2 + 1", "DECIMAL(6,1)"},
		{"7 / 2 + 1", "DOUBLE"},
		{"-1", ""},
	} {
		typ, ok := ss.arithType(scope{}, lex(c.expr))
		if c.want == "" {
			if ok {
				t.Errorf("%s: arithmetic %q, want not arithmetic", c.expr, typ)
			}
			continue
		}
		if typ != c.want {
			t.Errorf("%s: %q, want %q", c.expr, typ, c.want)
		}
	}
}
