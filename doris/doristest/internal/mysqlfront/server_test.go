package mysqlfront

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

const seedDDL = `CREATE TABLE order_state_eos (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2)) UNIQUE KEY(order_id) DISTRIBUTED BY HASH(order_id) BUCKETS 4 PROPERTIES ("enable_unique_key_merge_on_write" = "true", "function_column.sequence_col" = "op_version");`

func TestLogin(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.users["alice"] = "s3cret"
	_, addr := startFront(t, pwBackend{f})

	if err := openDB(t, "alice", "s3cret", addr, "/").Ping(); err != nil {
		t.Fatalf("native password login: %v", err)
	}
	if err := openDB(t, "root", "", addr, "/").Ping(); err != nil {
		t.Fatalf("empty password login: %v", err)
	}
	err := openDB(t, "alice", "wrong", addr, "/").Ping()
	if err == nil || !strings.Contains(err.Error(), "1045") {
		t.Fatalf("wrong password: err = %v, want access denied (1045)", err)
	}
	if err := openDB(t, "bob", "x", addr, "/").Ping(); err == nil {
		t.Fatal("unknown user logged in")
	}
}

func TestLoginCheckPasswordOnly(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.users["alice"] = "s3cret"
	_, addr := startFront(t, f) // no PasswordLookup: clear-text switch

	if err := openDB(t, "root", "", addr, "/").Ping(); err != nil {
		t.Fatalf("empty password login: %v", err)
	}
	if err := openDB(t, "alice", "s3cret", addr, "/?allowCleartextPasswords=true").Ping(); err != nil {
		t.Fatalf("clear-text login: %v", err)
	}
	if err := openDB(t, "alice", "nope", addr, "/?allowCleartextPasswords=true").Ping(); err == nil {
		t.Fatal("wrong clear-text password accepted")
	}
}

func TestUseDatabase(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.dbs["demo"] = map[string]*fakeTable{}
	f.dbs["other"] = map[string]*fakeTable{}
	_, addr := startFront(t, f)

	// COM_INIT_DB from the DSN.
	c := conn(t, addr, "demo")
	_, rows := queryRows(t, c, "SELECT DATABASE()")
	if joinRows(rows) != "demo" {
		t.Fatalf("DATABASE() = %q", joinRows(rows))
	}
	exec(t, c, "use `other`;")
	_, rows = queryRows(t, c, "select database() AS db")
	if joinRows(rows) != "other" {
		t.Fatalf("after USE: DATABASE() = %q", joinRows(rows))
	}
	_, err := c.ExecContext(context.Background(), "USE nope")
	wantMySQLError(t, err, 1049, "errCode = 2, detailMessage = Unknown database 'nope'")

	err = openDB(t, "root", "", addr, "/nope").Ping()
	wantMySQLError(t, err, 1049, "errCode = 2, detailMessage = Unknown database 'nope'")

	c2 := conn(t, addr, "")
	_, err = c2.QueryContext(context.Background(), "SHOW TABLES")
	wantMySQLError(t, err, 1046, "errCode = 2, detailMessage = No database selected")
}

func TestDDLRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	_, addr := startFront(t, f)
	c := conn(t, addr, "")

	exec(t, c, "CREATE DATABASE demo", "create database if not exists demo", "/* hi */ USE demo -- trailing")
	_, err := c.ExecContext(context.Background(), "CREATE DATABASE demo")
	wantMySQLError(t, err, 1105, "errCode = 2, detailMessage = Can't create database 'demo'; database exists")

	exec(t, c, seedDDL)
	_, rows := queryRows(t, c, "SHOW DATABASES")
	// Doris lists its system databases beside the users' (issue 9 item 8).
	if joinRows(rows) != "demo\ninformation_schema\nmysql" {
		t.Fatalf("SHOW DATABASES = %q", joinRows(rows))
	}
	cols, rows := queryRows(t, c, "show tables from demo")
	if cols[0] != "Tables_in_demo" || joinRows(rows) != "order_state_eos" {
		t.Fatalf("SHOW TABLES = %v %q", cols, joinRows(rows))
	}

	cols, rows = queryRows(t, c, "SHOW CREATE TABLE `demo`.`order_state_eos`")
	if strings.Join(cols, ",") != "Table,Create Table" || rows[0][0] != "order_state_eos" {
		t.Fatalf("SHOW CREATE TABLE = %v %v", cols, rows)
	}
	for _, want := range []string{"UNIQUE KEY", "op_version", "function_column.sequence_col", "BUCKETS 4"} {
		if !strings.Contains(rows[0][1], want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, rows[0][1])
		}
	}

	cols, rows = queryRows(t, c, "DESC order_state_eos")
	if strings.Join(cols, ",") != "Field,Type,Null,Key,Default,Extra" {
		t.Fatalf("DESC columns = %v", cols)
	}
	want := "order_id|bigint|YES|true|NULL|\n" +
		"op_version|bigint|YES|false|NULL|\n" +
		"status|varchar(16)|YES|false|NULL|\n" +
		"amount|decimal(12,2)|YES|false|NULL|"
	if got := joinRows(rows); got != want {
		t.Errorf("DESC =\n%s\nwant\n%s", got, want)
	}
	// SHOW COLUMNS is DESC with Key YES/NO (ShowColumnsCommand reads
	// information_schema.columns; DESC is IndexSchemaProcNode's true/false).
	_, rows2 := queryRows(t, c, "SHOW COLUMNS FROM order_state_eos FROM demo")
	wantCols := strings.NewReplacer("|true|", "|YES|", "|false|", "|NO|").Replace(want)
	if joinRows(rows2) != wantCols {
		t.Errorf("SHOW COLUMNS =\n%s\nwant\n%s", joinRows(rows2), wantCols)
	}

	exec(t, c, "DROP TABLE demo.order_state_eos", "DROP TABLE IF EXISTS order_state_eos")
	_, rows = queryRows(t, c, "SHOW TABLES")
	if len(rows) != 0 {
		t.Fatalf("after DROP TABLE: %v", rows)
	}
	exec(t, c, "DROP DATABASE demo", "DROP DATABASE IF EXISTS demo")
	_, err = c.ExecContext(context.Background(), "DROP DATABASE demo")
	wantMySQLError(t, err, 1105, "errCode = 2, detailMessage = Can't drop database 'demo'; database doesn't exist")
}

// TestDescribeAggregate checks Extra shows the aggregation of AGGREGATE KEY
// value columns (Doris IndexSchemaProcNode).
func TestDescribeAggregate(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.dbs["demo"] = map[string]*fakeTable{}
	_, addr := startFront(t, f)
	c := conn(t, addr, "demo")
	exec(t, c, "CREATE TABLE agg (k INT NOT NULL, v BIGINT SUM DEFAULT \"0\") AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
	_, rows := queryRows(t, c, "DESCRIBE agg")
	want := "k|int|NO|true|NULL|\nv|bigint|YES|false|0|SUM"
	if got := joinRows(rows); got != want {
		t.Errorf("DESC =\n%s\nwant\n%s", got, want)
	}
}

// TestShowTransaction follows docs/doris-facts.md §6.2.
func TestShowTransaction_6_2(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.dbs["demo"] = map[string]*fakeTable{}
	prep := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	f.txns["demo"] = []doris.Transaction{
		{ID: 1001, Label: "job:demo.t:0:1", Coordinator: "BE: 127.0.0.1", Status: doris.TxnPrecommitted,
			SourceType: "BACKEND_STREAMING", PrepareTime: prep, PreCommitTime: prep.Add(time.Second),
			ListenerID: -1, TimeoutMs: 259200000},
		{ID: 1002, Label: "job:demo.t:0:2", Coordinator: "BE: 127.0.0.1", Status: doris.TxnAborted,
			SourceType: "BACKEND_STREAMING", PrepareTime: prep, FinishTime: prep.Add(time.Hour),
			Reason: "timeout by txn manager", ListenerID: -1, TimeoutMs: 259200000},
	}
	_, addr := startFront(t, f)
	c := conn(t, addr, "demo")

	cols, rows := queryRows(t, c, "SHOW TRANSACTION FROM demo WHERE LABEL = 'job:demo.t:0:1'")
	if strings.Join(cols, ",") != strings.Join(doris.TransactionColumns, ",") {
		t.Fatalf("columns = %v", cols)
	}
	want := "1001|job:demo.t:0:1|BE: 127.0.0.1|PRECOMMITTED|BACKEND_STREAMING|2025-01-02 03:04:05|2025-01-02 03:04:06|NULL|NULL|NULL||0|-1|259200000|"
	if got := joinRows(rows); got != want {
		t.Errorf("by label =\n%s\nwant\n%s", got, want)
	}
	_, rows = queryRows(t, c, "show transaction where id = 1002;")
	if len(rows) != 1 || rows[0][3] != "ABORTED" || rows[0][10] != "timeout by txn manager" || rows[0][9] != "2025-01-02 04:04:05" {
		t.Errorf("by id = %v", rows)
	}
	_, rows = queryRows(t, c, "SHOW TRANSACTION WHERE label like 'job:demo.t:0:%'")
	if len(rows) != 2 {
		t.Errorf("by label like = %v", rows)
	}
	_, rows = queryRows(t, c, "SHOW TRANSACTION WHERE STATUS = 'aborted'")
	if len(rows) != 1 || rows[0][0] != "1002" {
		t.Errorf("by status = %v", rows)
	}
	_, rows = queryRows(t, c, "SHOW TRANSACTION WHERE status = 'visible'")
	if len(rows) != 0 {
		t.Errorf("by status visible = %v", rows)
	}

	for q, msg := range map[string]string{
		"SHOW TRANSACTION WHERE label = 'nope'":    "transaction with label nope does not exist",
		"SHOW TRANSACTION WHERE id = 77":           "transaction with id 77 does not exist",
		"SHOW TRANSACTION":                         msgTxnNoWhere,
		"SHOW TRANSACTION WHERE id > 3":            msgTxnBadWhere,
		"SHOW TRANSACTION WHERE status = 'bogus'":  msgTxnBadWhere,
		"SHOW TRANSACTION WHERE label = 1":         msgTxnBadWhere,
		"SHOW TRANSACTION WHERE txn = 'x' and a=1": msgTxnBadWhere,
	} {
		_, err := c.QueryContext(context.Background(), q)
		wantMySQLError(t, err, 1105, "errCode = 2, detailMessage = "+msg)
	}
	_, err := c.QueryContext(context.Background(), "SHOW TRANSACTION FROM nope WHERE id = 1")
	wantMySQLError(t, err, 1049, "errCode = 2, detailMessage = Unknown database 'nope'")
}

func TestFrontendConfig_5(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.configs = [][2]string{
		{"stream_load_default_precommit_timeout_second", "3600"},
		{"stream_load_default_timeout_second", "259200"},
		{"label_num_threshold", "2000"},
		{"enable_feature", "true"},
	}
	_, addr := startFront(t, f)
	c := conn(t, addr, "")
	cols, rows := queryRows(t, c, "ADMIN SHOW FRONTEND CONFIG LIKE 'stream_load%'")
	if strings.Join(cols, ",") != "Key,Value,Type,IsMutable,MasterOnly,Comment" {
		t.Fatalf("columns = %v", cols)
	}
	want := "stream_load_default_precommit_timeout_second|3600|int|true|true|\n" +
		"stream_load_default_timeout_second|259200|int|true|true|"
	if got := joinRows(rows); got != want {
		t.Errorf("rows =\n%s\nwant\n%s", got, want)
	}
	_, rows = queryRows(t, c, "admin show frontend config")
	if len(rows) != 4 || rows[3][2] != "boolean" {
		t.Errorf("all = %v", rows)
	}
}

func TestSelectViaEngine(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.dbs["demo"] = map[string]*fakeTable{}
	_, addr := startFront(t, f)
	c := conn(t, addr, "demo")
	exec(t, c, seedDDL)
	if err := f.setRows("demo", "order_state_eos", [][]any{
		{int64(1), int64(1), "NEW", "10.50"},
		{int64(2), int64(3), "PAID", "20.00"},
		{int64(3), int64(2), "PAID", "5.25"},
		{int64(4), int64(1), "NEW", nil},
	}); err != nil {
		t.Fatal(err)
	}
	_, rows := queryRows(t, c,
		"SELECT status, COUNT(*) AS n, SUM(op_version) FROM order_state_eos GROUP BY status HAVING COUNT(*) >= 2 ORDER BY status")
	if got := joinRows(rows); got != "NEW|2|2\nPAID|2|5" {
		t.Errorf("GROUP BY/HAVING =\n%s", got)
	}

	// Prepared statement with a string argument (binary result rows).
	db := openDB(t, "root", "", addr, "/demo")
	var id, ver int64
	var amount string
	err := db.QueryRow("SELECT order_id, op_version, amount FROM order_state_eos WHERE status = ? AND order_id > ? ORDER BY order_id",
		"PAID", 2).Scan(&id, &ver, &amount)
	if err != nil {
		t.Fatal(err)
	}
	if id != 3 || ver != 2 || amount != "5.25" {
		t.Errorf("prepared select = %d %d %s", id, ver, amount)
	}
}

func TestPreparedShowTransaction_6_2(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	f.dbs["demo"] = map[string]*fakeTable{}
	f.txns["demo"] = []doris.Transaction{{ID: 7, Label: "it's", Status: doris.TxnVisible, ListenerID: -1}}
	_, addr := startFront(t, f)
	db := openDB(t, "root", "", addr, "/demo")

	_, rows := queryRows(t, db, "SHOW TRANSACTION FROM demo WHERE LABEL = ?", "it's")
	if len(rows) != 1 || rows[0][0] != "7" || rows[0][3] != "VISIBLE" || rows[0][5] != "NULL" {
		t.Fatalf("prepared SHOW TRANSACTION = %v", rows)
	}
	_, err := db.Query("SHOW TRANSACTION WHERE label = ?", "none")
	wantMySQLError(t, err, 1105, "errCode = 2, detailMessage = transaction with label none does not exist")
}

func TestSessionStatements(t *testing.T) {
	t.Parallel()
	f := newFakeBackend()
	_, addr := startFront(t, f, WithVersionComment("Doris version doris-test"))
	c := conn(t, addr, "")

	cols, rows := queryRows(t, c, "select @@version_comment limit 1")
	if cols[0] != "@@version_comment" || joinRows(rows) != "Doris version doris-test" {
		t.Errorf("version_comment = %v %v", cols, rows)
	}
	_, rows = queryRows(t, c, "SELECT 1, 'a' AS s, @@session.autocommit, @@max_allowed_packet, VERSION(), NULL")
	if got := joinRows(rows); got != "1|a|1|16777216|5.7.99|NULL" {
		t.Errorf("select = %q", got)
	}
	exec(t, c, "SET NAMES utf8mb4", "SET sql_mode = 'STRICT_TRANS_TABLES', @@session.wait_timeout = 5", "SET @user_var = 1")
	_, rows = queryRows(t, c, "SELECT @@sql_mode, @@wait_timeout")
	if got := joinRows(rows); got != "STRICT_TRANS_TABLES|5" {
		t.Errorf("after SET = %q", got)
	}
	_, rows = queryRows(t, c, "SHOW VARIABLES LIKE 'lower_case%'")
	if got := joinRows(rows); got != "lower_case_table_names|0" {
		t.Errorf("SHOW VARIABLES = %q", got)
	}
	cols, rows = queryRows(t, c, "SHOW WARNINGS")
	if len(cols) != 3 || len(rows) != 0 {
		t.Errorf("SHOW WARNINGS = %v %v", cols, rows)
	}
	_, err := c.QueryContext(context.Background(), "SELECT @@no_such_var")
	wantMySQLError(t, err, 1193, "errCode = 2, detailMessage = Unknown system variable 'no_such_var'")
}

func TestUnknownStatement(t *testing.T) {
	t.Parallel()
	_, addr := startFront(t, newFakeBackend())
	c := conn(t, addr, "")
	_, err := c.ExecContext(context.Background(), "GRANT ALL ON *.* TO bob;")
	wantMySQLError(t, err, 1105, "errCode = 2, detailMessage = the Doris emulator does not support this statement, or it is malformed: GRANT ALL ON *.* TO bob")
	// Not a statement at all: Doris's parser answer (nereids ParseException
	// via ParseErrorListener: "\n<message>(line L, pos P)\n").
	_, err = c.ExecContext(context.Background(), "SELEC 1")
	wantMySQLError(t, err, 1105, "errCode = 2, detailMessage = \nmismatched input 'SELEC' expecting {'(', 'ADMIN', 'ALTER', 'BEGIN', 'COMMIT', 'CREATE', 'DELETE', 'DESC', 'DROP', 'EXPLAIN', 'INSERT', 'ROLLBACK', 'SELECT', 'SET', 'SHOW', 'TRUNCATE', 'UPDATE', 'USE', 'WITH'}(line 1, pos 0)\n")
}

func TestCloseIdempotent(t *testing.T) {
	t.Parallel()
	s, addr := startFront(t, newFakeBackend())
	c := conn(t, addr, "")
	exec(t, c, "SET autocommit = 1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.PingContext(context.Background()); err == nil {
		t.Fatal("connection alive after Close")
	}
}
