package doristest

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
)

// Issue 26: "A query the emulator cannot evaluate correctly is refused with
// a clear error — never answered wrongly." Each case cites the Doris rule it
// follows (FE class) or says why the emulator refuses.

// wantRefused checks that q fails with the emulator's refusal naming what.
func wantRefused(t *testing.T, db *sql.DB, q, what string) {
	t.Helper()
	rows, err := db.Query(q)
	if err == nil {
		var got []string
		for rows.Next() {
			var v sql.NullString
			_ = rows.Scan(&v)
			got = append(got, v.String)
		}
		err = rows.Err()
		_ = rows.Close()
		if err == nil {
			t.Fatalf("%s: answered %q, want a refusal naming %q", q, got, what)
		}
	}
	if !strings.Contains(err.Error(), sqlexec.NotEmulatedPrefix) || !strings.Contains(err.Error(), what) {
		t.Fatalf("%s: error %q, want the emulator's refusal naming %q", q, err, what)
	}
}

func TestIssue26ExactIntegerArithmetic(t *testing.T) {
	t.Parallel()
	s, db := salesServer(t)
	if err := s.CreateTable(testDB, "CREATE TABLE big (id BIGINT, n BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	if m, raw := load(t, s, "big", "1\t9223372036854775807\n2\t9223372036854775807\n", hdr{"label": "big-1"}); m["Status"] != "Success" {
		t.Fatalf("load: %s", raw)
	}
	// Doris computes BIGINT + BIGINT in LARGEINT (Add.getDataTypeForOthers
	// → DataType.promotion); SQLite overflows into a REAL: refused.
	wantRefused(t, db, "SELECT n + n FROM big WHERE id = 1", "integer arithmetic past the BIGINT range")
	wantRefused(t, db, "SELECT n * 2 FROM big WHERE id = 1", "integer arithmetic past the BIGINT range")
	// SUM past 2^63: SQLite fails with a bare "integer overflow"; the
	// client gets the emulator's refusal instead.
	wantRefused(t, db, "SELECT SUM(n) FROM big", "an integer aggregate exceeds the BIGINT range")
	// In range, integer arithmetic answers: INT + INT promotes (Add), here
	// BIGINT + TINYINT → LARGEINT, sent as a string column (§14.1).
	var got string
	queryOne(t, db, "SELECT id + 1 FROM big WHERE id = 2", nil, &got)
	wantEq(t, "id + 1", got, "3")
	// Doris divides integers into a DOUBLE (TypeCoercionUtils.processDivide);
	// SQLite would answer 3 for 7/2 and 0 for SUM(id)/COUNT(*)… here 21/6.
	var f float64
	queryOne(t, db, "SELECT 7 / 2", nil, &f)
	wantEq(t, "7 / 2", f, 3.5)
	queryOne(t, db, "SELECT SUM(id) / COUNT(*) FROM sales", nil, &f)
	wantEq(t, "SUM(id) / COUNT(*)", f, 3.5)
	queryOne(t, db, "SELECT COUNT(*) FROM sales WHERE id / 2 > 2", nil, &f)
	wantEq(t, "id / 2 > 2 (ids 5, 6)", f, 2.0)
	queryOne(t, db, "SELECT 1 + 2 * 3 / 4", nil, &f)
	wantEq(t, "1 + 2 * 3 / 4", f, 2.5)
}

func TestIssue26StringArithmetic(t *testing.T) {
	t.Parallel()
	s, db := salesServer(t)
	// A string literal operand must parse as a number, else Doris fails
	// the query: TypeCoercionUtils.processBinaryArithmetic, "string literal
	// %s cannot be cast to double". SQLite would answer 13.
	_, err := db.Query("SELECT '12abc' + 1")
	if err == nil || !strings.Contains(err.Error(), "string literal '12abc' cannot be cast to double") {
		t.Fatalf("'12abc' + 1: err %v, want Doris's cast error", err)
	}
	var f float64
	queryOne(t, db, "SELECT '12' + 1", nil, &f)
	wantEq(t, "'12' + 1", f, 13.0)
	// A string column is cast to DOUBLE (the default coercion of
	// processBinaryArithmetic): '12abc' → NULL, as Doris's non-strict cast.
	if err := s.CreateTable(testDB, "CREATE TABLE strs (id BIGINT, v VARCHAR(16)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	if m, raw := load(t, s, "strs", "1\t12abc\n2\t12\n", hdr{"label": "strs-1"}); m["Status"] != "Success" {
		t.Fatalf("load: %s", raw)
	}
	var v sql.NullFloat64
	queryOne(t, db, "SELECT v + 1 FROM strs WHERE id = 1", nil, &v)
	if v.Valid {
		t.Fatalf("'12abc' column + 1 = %v, want NULL", v.Float64)
	}
	queryOne(t, db, "SELECT strs.v + 1 FROM strs WHERE id = 2", nil, &v)
	wantEq(t, "'12' column + 1", v, sql.NullFloat64{Float64: 13, Valid: true})
}

func TestIssue26ExactDecimal(t *testing.T) {
	t.Parallel()
	s, db := salesServer(t)
	// SUM of DECIMAL(10,2) (15 digits or fewer) stays answered, exactly.
	var got string
	queryOne(t, db, "SELECT SUM(amount) FROM sales", nil, &got)
	wantEq(t, "SUM(amount)", got, "101.00")
	// DECIMAL + DECIMAL: Add.getDataTypeForDecimalV3 keeps the scale.
	queryOne(t, db, "SELECT amount + amount FROM sales WHERE id = 3", nil, &got)
	wantEq(t, "amount + amount", got, "60.50")
	// DECIMAL * DECIMAL: Multiply.getDataTypeForDecimalV3, scales add.
	queryOne(t, db, "SELECT amount * 1.5 FROM sales WHERE id = 3", nil, &got)
	wantEq(t, "amount * 1.5", got, "45.375")
	// DECIMAL division: Doris types it with div_precision_increment
	// (Divide.getDataTypeForDecimalV3), not emulated: refused.
	wantRefused(t, db, "SELECT SUM(amount) / COUNT(*) FROM sales", "DECIMAL /")

	if err := s.CreateTable(testDB, "CREATE TABLE wide (id BIGINT, x DECIMAL(38,2)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	if m, raw := load(t, s, "wide", "1\t1234567890123456.78\n2\t9999999999999.99\n3\t9999999999999.99\n", hdr{"label": "wide-1"}); m["Status"] != "Success" {
		t.Fatalf("load: %s", raw)
	}
	// A value float64 cannot hold (18 significant digits): refused where
	// the query reads it, even in a plain SELECT, rather than rounded.
	wantRefused(t, db, "SELECT x FROM wide WHERE id = 1", "has 18 significant digits")
	wantRefused(t, db, "SELECT SUM(x) FROM wide", "has 18 significant digits")
	// Values of 15 digits whose sum needs 16: the result is refused.
	wantRefused(t, db, "SELECT SUM(x) FROM wide WHERE id > 1", "more than 15 significant digits")
	queryOne(t, db, "SELECT x FROM wide WHERE id = 2", nil, &got)
	wantEq(t, "x (15 digits)", got, "9999999999999.99")
}

func TestIssue26UnixTimestampFraction(t *testing.T) {
	t.Parallel()
	_, db := salesServer(t)
	// Doris answers UNIX_TIMESTAMP of a DATETIME(p>0) with a DECIMAL that
	// keeps the fraction (UnixTimestamp's signatures); the emulator types
	// it INT, so it refuses instead of dropping the fraction.
	wantRefused(t, db, "SELECT UNIX_TIMESTAMP(ms) FROM sales WHERE id = 3", "UNIX_TIMESTAMP of a date-time with fractional seconds")
	var n int64
	queryOne(t, db, "SELECT UNIX_TIMESTAMP(ts) FROM sales WHERE id = 3", nil, &n)
	wantEq(t, "UNIX_TIMESTAMP(ts)", n, int64(1717200000))
}
