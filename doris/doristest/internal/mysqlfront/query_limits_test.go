package mysqlfront

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// A SELECT runs under the session's query_timeout (Doris's session variable;
// the emulator's default is WithQueryTimeout, 60 s): a query that never ends
// is stopped and the client gets an error, and the engine serves the next
// query. The deadline is the event waited on; nothing sleeps.
func TestSelectQueryTimeout(t *testing.T) {
	t.Parallel()
	_, addr := startFront(t, newFakeBackend(), WithQueryTimeout(time.Hour))
	c := conn(t, addr, "")
	_, rows := queryRows(t, c, "SELECT @@query_timeout")
	if joinRows(rows) != "3600" {
		t.Fatalf("@@query_timeout = %s, want 3600 (the server default)", joinRows(rows))
	}
	exec(t, c, "SET query_timeout = 1")
	_, err := c.QueryContext(context.Background(), "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n")
	// fe ResultReceiver.java: "query timeout, query id = <hi>-<lo>".
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1105 || !strings.HasPrefix(me.Message, "errCode = 2, detailMessage = query timeout, query id = ") {
		t.Fatalf("err = %v, want Doris's query timeout", err)
	}
	_, rows = queryRows(t, c, "SELECT 1 + 1")
	if joinRows(rows) != "2" {
		t.Fatalf("after a timeout: %s", joinRows(rows))
	}
}

// SHOW FULL COLUMNS has MySQL's nine columns (the Flink connector's schema
// change reads Default and Comment from it), with Doris's values: Key YES/NO,
// Collation "" and Privileges "" (fe ShowColumnsCommand reads
// information_schema.columns; issue 26).
func TestShowFullColumns(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	_, addr := startFront(t, f)
	c := conn(t, addr, "")
	exec(t, c, "CREATE DATABASE demo", "USE demo", "CREATE TABLE t (k BIGINT COMMENT 'the key', v VARCHAR(8) DEFAULT 'x') DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
	cols, rows := queryRows(t, c, "SHOW FULL COLUMNS FROM `demo`.`t`")
	if joinRows([][]string{cols}) != "Field|Type|Collation|Null|Key|Default|Extra|Privileges|Comment" {
		t.Fatalf("columns = %v", cols)
	}
	want := "k|bigint||YES|YES|NULL|||the key\nv|varchar(8)||YES|NO|x|||"
	if got := joinRows(rows); got != want {
		t.Fatalf("rows =\n%s\nwant\n%s", got, want)
	}
}
