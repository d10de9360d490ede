package doristest

import (
	"database/sql"
	"testing"

	_ "github.com/go-sql-driver/mysql"
)

func openMySQL(t *testing.T, s *Server) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", "root:@tcp("+s.MySQLAddr()+")/demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestMySQL_ShowTransaction_6_2(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "sq", "1\ta\n")
	db := openMySQL(t, s)
	rows, err := db.Query("SHOW TRANSACTION FROM demo WHERE label = 'sq'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	wantEq(t, "columns", len(cols), 15)
	if !rows.Next() {
		t.Fatal("no row")
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "TransactionId", vals[0].String, itoa(id))
	wantEq(t, "TransactionStatus", vals[3].String, "PRECOMMITTED")
	wantEq(t, "LoadJobSourceType", vals[4].String, "BACKEND_STREAMING")

	_, err = db.Exec("SHOW TRANSACTION FROM demo WHERE label = 'nope'")
	if err == nil {
		t.Fatal("want an error for an unknown label")
	}
	// show_txn fault.
	if _, err := s.Fault(Fault{Op: FaultShowTxn, Err: &FaultErr{Message: "injected"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SHOW TRANSACTION FROM demo WHERE label = 'sq'"); err == nil {
		t.Fatal("want the injected error")
	}
}

func TestMySQL_FrontendConfig_5(t *testing.T) {
	t.Parallel()
	s := newServer(t, FEConfig(ConfLabelNumThreshold, 77))
	db := openMySQL(t, s)
	rows, err := db.Query("ADMIN SHOW FRONTEND CONFIG LIKE 'label_num%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatal("no row")
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "key", vals[0].String, ConfLabelNumThreshold)
	wantEq(t, "value", vals[1].String, "77")
}

func TestCreateTableFromDDL(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	err := s.CreateTable(testDB, "CREATE TABLE kv (k BIGINT, v VARCHAR(8)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
	if err != nil {
		t.Fatal(err)
	}
	load(t, s, "kv", "1\ta\n1\tb\n", hdr{"label": "u"})
	rows, _ := s.Rows(testDB, "kv")
	if len(rows) != 1 || rows[0][1] != "b" {
		t.Fatalf("rows = %v, want one row (1, b)", rows)
	}
	db := openMySQL(t, s)
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM kv").Scan(&n); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "count", n, 1)
}

// SHOW TRANSACTION … WHERE label LIKE follows Doris, not SQL LIKE: only %
// is a wildcard (turned into .*), the whole label must match, case
// sensitively, and _ is a literal (ShowTransactionCommand; docs/doris-facts.md
// §6.2 is silent on it).
func TestMySQL_ShowTransactionLabelLike_6_2(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	precommit(t, s, "job:a_1", "1\ta\n")
	precommit(t, s, "job:ab1", "2\tb\n")
	precommit(t, s, "Job:a_2", "3\tc\n")
	db := openMySQL(t, s)
	for pattern, want := range map[string]int{
		"job:%":   2, // case-sensitive: not Job:a_2
		"job:a_%": 1, // _ is literal: not job:ab1
		"job:a":   0, // whole-label match
		"%a_%":    2, // job:a_1 and Job:a_2
	} {
		rows, err := db.Query("SHOW TRANSACTION FROM demo WHERE label LIKE '" + pattern + "'")
		if err != nil {
			t.Fatalf("LIKE %q: %v", pattern, err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != want {
			t.Errorf("LIKE %q matched %d txns, want %d", pattern, n, want)
		}
	}
}
