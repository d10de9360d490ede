package doristest

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// review2: an INSERT with an empty value (VALUES (1,,2), VALUES ()) is a
// syntax error answered on the same connection, not a panic that closes it.
func TestReview2InsertEmptyValueIsAnError(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, "CREATE TABLE e (k BIGINT, v BIGINT, w BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	db := openTyped(t, s)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"INSERT INTO e VALUES (1,,2)", "INSERT INTO e VALUES ()", "INSERT INTO e VALUES (1, 2, )"} {
		if _, err := conn.ExecContext(ctx, q); err == nil {
			t.Fatalf("%s: no error", q)
		}
		var one int
		if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			t.Fatalf("after %s the connection is gone: %v", q, err)
		}
	}
}

// review2: INSERT keeps a DECIMAL literal exact (Doris parses it as a
// decimal literal, not a double) and a LARGEINT beyond int64.
func TestReview2InsertExactNumbers(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, "CREATE TABLE n (k BIGINT, d DECIMAL(20,2), l LARGEINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	db := openTyped(t, s)
	if _, err := db.Exec("INSERT INTO n VALUES (1, 123456789012345678.91, 170141183460469231731687303715884105727)"); err != nil {
		t.Fatal(err)
	}
	// The stored row (SELECT's DECIMAL arithmetic is floating point,
	// docs/emulator.md, so the table is read directly).
	rows, err := s.Rows(testDB, "n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("rows = %v", rows)
	}
	wantEq(t, "decimal", fmt.Sprint(rows[0][1]), "123456789012345678.91")
	wantEq(t, "largeint", fmt.Sprint(rows[0][2]), "170141183460469231731687303715884105727")
}

// review2: INSERT naming __DORIS_DELETE_SIGN__ = 1 deletes the key on a
// Unique table, as Stream Load's delete sign does.
func TestReview2InsertDeleteSign(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, "CREATE TABLE u (k BIGINT, v VARCHAR(8)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	db := openTyped(t, s)
	for _, q := range []string{"INSERT INTO u VALUES (1, 'a'), (2, 'b')", "INSERT INTO u (k, v, __DORIS_DELETE_SIGN__) VALUES (1, 'a', 1)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	queryOne(t, db, "SELECT COUNT(*) FROM u", nil, &n)
	wantEq(t, "rows after delete-sign INSERT", n, 1)
}

// review2: an INSERT naming a column the table lacks, or one column twice,
// is refused naming it (Doris refuses both); it loaded the row with the
// value dropped. VALUES without a row is a syntax error; TRUE/FALSE are
// literals (1/0), as the INSERT's doc says.
func TestReview2InsertColumnListChecked(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, "CREATE TABLE p (k BIGINT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	db := openTyped(t, s)
	for q, want := range map[string]string{
		"INSERT INTO p (k, nope) VALUES (1, 2)": "nope",
		"INSERT INTO p (k, K) VALUES (1, 2)":    "K",
		"INSERT INTO p VALUES":                  "",
	} {
		_, err := db.Exec(q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want an error naming %q", q, err, want)
		}
	}
	if _, err := db.Exec("INSERT INTO p VALUES (TRUE, FALSE)"); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Rows(testDB, "p")
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "rows", fmt.Sprint(rows), "[[1 0]]")
}
