package doristest

import (
	"database/sql"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// count runs SELECT COUNT(*) FROM table over MySQL.
func count(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// mustExec runs statements over MySQL.
func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Issue 9 item 5: after DROP TABLE + CREATE TABLE of the same name a SELECT
// must see the new, empty table, whatever the old one's version was. The
// table gets a new catalog id; ALTER keeps it.
func TestDropCreateSameNameIsANewTable(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	load(t, s, "orders", "1\ta\n2\tb\n3\tc\n", hdr{"label": "l1"})
	wantEq(t, "count before drop", count(t, db, "orders"), 3)
	before, err := s.TableID(testDB, "orders")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "DROP TABLE orders",
		"CREATE TABLE orders (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	wantEq(t, "count after drop+create", count(t, db, "orders"), 0)
	after, err := s.TableID(testDB, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Errorf("table id %d reused after DROP+CREATE", after)
	}
	// What a txn begun on the old table finds at commit: nothing (issue 9
	// "a txn whose table was dropped"); the new table under its own id.
	s.mu.Lock()
	d := s.dbs[testDB]
	gone, now := d.tableByID(before), d.tableByID(after)
	s.mu.Unlock()
	if gone != nil || now == nil {
		t.Errorf("tableByID(old) = %v, tableByID(new) = %v; want nil and the new table", gone, now)
	}
	load(t, s, "orders", "9\tz\n", hdr{"label": "l2"})
	wantEq(t, "count after a load", count(t, db, "orders"), 1)
}

// TRUNCATE TABLE empties the table and keeps it (fe TruncateTableCommand).
func TestTruncateTable(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	load(t, s, "orders", "1\ta\n2\tb\n", hdr{"label": "l1"})
	wantEq(t, "count", count(t, db, "orders"), 2)
	mustExec(t, db, "TRUNCATE TABLE demo.orders")
	wantEq(t, "count after truncate", count(t, db, "orders"), 0)
	load(t, s, "orders", "3\tc\n", hdr{"label": "l2"})
	wantEq(t, "count after a new load", count(t, db, "orders"), 1)
	_, err := db.Exec("TRUNCATE TABLE nope")
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1051 {
		t.Errorf("TRUNCATE of a missing table: %v, want MySQL error 1051", err)
	}
}

// Issue 9 item 8: SQLite's wording never reaches a client; Doris's analyzer
// texts do (regression-test query_not_exists_table_column.groovy).
func TestSelectErrorsUseDorisText(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateDatabase("empty"); err != nil {
		t.Fatal(err)
	}
	db := openMySQL(t, s)
	for q, want := range map[string]string{
		"SELECT * FROM nope":              "errCode = 2, detailMessage = Table [nope] does not exist in database [demo].",
		"SELECT * FROM empty.t":           "errCode = 2, detailMessage = Table [t] does not exist in database [empty].",
		"SELECT * FROM nodb.t":            "errCode = 2, detailMessage = Database [nodb] does not exist.",
		"SELECT nope FROM orders":         "errCode = 2, detailMessage = Unknown column 'nope' in 'table list'",
		"SELECT bogus_fn(id) FROM orders": "errCode = 2, detailMessage = Can not found function 'bogus_fn'",
	} {
		_, err := db.Query(q)
		var me *gomysql.MySQLError
		if !errors.As(err, &me) {
			t.Errorf("%s: %v, want a MySQL error", q, err)
			continue
		}
		if me.Number != 1105 || me.Message != want {
			t.Errorf("%s: %d %q, want 1105 %q", q, me.Number, me.Message, want)
		}
		for _, leak := range []string{"sqlexec", "SQL logic error", "no such"} {
			if strings.Contains(me.Message, leak) {
				t.Errorf("%s: %q leaks %q", q, me.Message, leak)
			}
		}
	}
}

// SHOW DATABASES lists information_schema and mysql beside the users'
// databases, as a Doris FE does (issue 9 item 8).
func TestShowDatabasesListsSystemDatabases(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	rows, err := db.Query("SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	wantEq(t, "databases", strings.Join(got, ","), "demo,information_schema,mysql")
}

// SELECTs read snapshots while loads commit: every answer is a whole number
// of loads (a load's rows become visible together) and the last one sees
// them all. Run with -race.
func TestSelectDuringLoads(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	const loads, rowsPerLoad = 20, 3
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range loads {
			body := ""
			for j := range rowsPerLoad {
				body += strconv.Itoa(i*rowsPerLoad+j) + "\tx\n"
			}
			resp, err := doErr(http.MethodPut, s.BEURL()+"/api/"+testDB+"/orders/_stream_load", hdr{"label": "c" + strconv.Itoa(i)}, body)
			if err != nil {
				t.Errorf("load %d: %v", i, err)
				return
			}
			resp.Body.Close()
		}
	}()
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		if n := count(t, db, "orders"); n%rowsPerLoad != 0 {
			t.Fatalf("COUNT(*) = %d: part of a load was visible", n)
		}
	}
	wantEq(t, "final count", count(t, db, "orders"), loads*rowsPerLoad)
}
