package doristest

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// queryStrings runs q with args and returns its rows as text (NULL as
// "NULL"), one row per element, columns joined by "|".
func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

// wantDDLError checks a MySQL 1105 "errCode = 2" error with Doris's text.
func wantDDLError(t *testing.T, err error, msg string) {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1105 || me.Message != "errCode = 2, detailMessage = "+msg {
		t.Errorf("err = %v, want 1105 %q", err, msg)
	}
}

// ALTER TABLE ADD / DROP / MODIFY COLUMN follow fe SchemaChangeHandler and
// show in DESC, SHOW CREATE TABLE, Server.Schema (the FE _schema endpoint's
// source), SELECT and Stream Load column matching; existing rows read an
// added column as its default (be segment.cpp new_default_iterator).
func TestAlterTableColumns(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	load(t, s, "orders", "1\ta\n2\tb\n", hdr{"label": "l1"})
	id, _ := s.TableID(testDB, "orders")

	mustExec(t, db, `ALTER TABLE orders ADD COLUMN qty INT DEFAULT "7"`,
		"ALTER TABLE demo.orders ADD COLUMN (note VARCHAR(16) NULL, flag TINYINT NOT NULL DEFAULT '0' AFTER id)")
	wantEq(t, "rows after ADD", strings.Join(queryStrings(t, db, "SELECT * FROM orders ORDER BY id"), ";"),
		"1|0|a|7|NULL;2|0|b|7|NULL")
	wantEq(t, "DESC", strings.Join(queryStrings(t, db, "DESC orders"), ";"),
		"id|bigint|YES|true|NULL|;flag|tinyint|NO|false|0|;v|varchar(32)|YES|false|NULL|;qty|int|YES|false|7|;note|varchar(16)|YES|false|NULL|")
	ddl := queryStrings(t, db, "SHOW CREATE TABLE orders")[0]
	if !strings.Contains(ddl, "`qty` int NULL DEFAULT \"7\"") || !strings.Contains(ddl, "`note` varchar(16) NULL") {
		t.Errorf("SHOW CREATE TABLE lacks the new columns: %s", ddl)
	}
	sch, err := s.Schema(testDB, "orders")
	if err != nil || len(sch.Columns) != 5 || sch.Columns[1].Name != "flag" {
		t.Errorf("Schema = %+v, %v; want the 5 columns after ALTER", sch, err)
	}
	// Positional CSV now matches the new schema.
	m, raw := load(t, s, "orders", "3\t1\tc\t9\thello\n", hdr{"label": "l2"})
	if m["Status"] != "Success" {
		t.Fatalf("load after ADD: %s", raw)
	}

	mustExec(t, db, "ALTER TABLE orders DROP COLUMN note, MODIFY COLUMN v VARCHAR(64)")
	wantEq(t, "rows after DROP", strings.Join(queryStrings(t, db, "SELECT * FROM orders ORDER BY id"), ";"),
		"1|0|a|7;2|0|b|7;3|1|c|9")
	wantEq(t, "type after MODIFY", queryStrings(t, db, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = 'orders' AND COLUMN_NAME = 'v'")[0], "varchar(64)")
	if after, _ := s.TableID(testDB, "orders"); after != id {
		t.Errorf("table id changed by ALTER: %d → %d", id, after)
	}
	// A widening MODIFY converts values: INT → BIGINT, BIGINT → VARCHAR.
	mustExec(t, db, "ALTER TABLE orders MODIFY COLUMN qty BIGINT DEFAULT \"7\"")
	wantEq(t, "sum after widening", queryStrings(t, db, "SELECT SUM(qty) FROM orders")[0], "23")
}

// Refusals and their messages (fe SchemaChangeHandler.java,
// Column.checkSchemaChangeAllowed).
func TestAlterTableRefusals(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, "CREATE TABLE kv (k BIGINT, v VARCHAR(8), n INT NULL) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	db := openMySQL(t, s)
	for q, msg := range map[string]string{
		"ALTER TABLE kv DROP COLUMN k":                                      "Can not drop key column in Unique data model table",
		"ALTER TABLE kv DROP COLUMN nope":                                   "Column does not exists: nope",
		"ALTER TABLE kv ADD COLUMN v INT":                                   "Can not add column which already exists in base table: v",
		"ALTER TABLE kv ADD COLUMN x INT SUM":                               "Can not assign aggregation method on column in Unique data model table: x",
		"ALTER TABLE kv ADD COLUMN x INT AFTER nope":                        "Column[nope] does not found",
		"ALTER TABLE kv MODIFY COLUMN v VARCHAR(4)":                         "Cannot shorten string length",
		"ALTER TABLE kv MODIFY COLUMN n SMALLINT":                           "Can not change INT to SMALLINT",
		"ALTER TABLE kv MODIFY COLUMN n INT NOT NULL":                       "Can not change from nullable to non-nullable",
		"ALTER TABLE kv MODIFY COLUMN n INT DEFAULT '1'":                    "Can not change default value",
		"ALTER TABLE kv MODIFY COLUMN nope INT":                             "Column[nope] does not exists",
		"ALTER TABLE orders DROP COLUMN id":                                 "Distribution column[id] cannot be dropped. index[orders]",
		"ALTER TABLE orders MODIFY COLUMN id LARGEINT":                      "Can not modify distribution column[id]. index[orders]",
		"ALTER TABLE orders ADD COLUMN c INT DEFAULT '0', DROP COLUMN nope": "Column does not exists: nope",
	} {
		_, err := db.Exec(q)
		wantDDLError(t, err, msg)
	}
	// The failed multi-clause ALTER changed nothing.
	sch, _ := s.Schema(testDB, "orders")
	wantEq(t, "orders columns", len(sch.Columns), 2)
}

// A load begun before a light schema change and committed after it commits:
// Doris plans the load with the schema of its begin (its rowset carries that
// tablet schema) and a read fills columns the rowset lacks with their
// default, NULL when none (be segment_v2/segment.cpp new_default_iterator);
// no commit-time schema check exists for light schema change. A column
// dropped meanwhile is simply gone from the committed rows.
func TestAlterTableWithLoadInFlight(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	before := precommit(t, s, "inflight-1", "1\ta\n")
	mustExec(t, db, `ALTER TABLE orders ADD COLUMN qty INT DEFAULT "5"`)
	if _, msg, raw := txn2pc(t, s, hdr{"txn_id": fmt.Sprint(before), "txn_operation": "commit"}); !strings.Contains(raw, "Success") {
		t.Fatalf("commit after ADD COLUMN: %s %s", msg, raw)
	}
	second := precommit(t, s, "inflight-2", "2\tb\t9\n")
	mustExec(t, db, "ALTER TABLE orders DROP COLUMN v")
	if _, msg, raw := txn2pc(t, s, hdr{"txn_id": fmt.Sprint(second), "txn_operation": "commit"}); !strings.Contains(raw, "Success") {
		t.Fatalf("commit after DROP COLUMN: %s %s", msg, raw)
	}
	wantEq(t, "rows", strings.Join(queryStrings(t, db, "SELECT * FROM orders ORDER BY id"), ";"), "1|5;2|9")
}
