package doristest

import (
	"strings"
	"testing"
)

// The exact information_schema queries of the Doris Flink connector
// (DorisSystem.java listDatabases / listTables / getTableFieldNames,
// SchemaChangeHelper.java CHECK_COLUMN_EXISTS / CHECK_DATABASE_EXISTS,
// DorisCatalog.java getTable) and the Kafka connector
// (DorisSystemService.java), replayed: as text and as server-side prepared
// statements with ? parameters (JDBC's PreparedStatement), with the values
// Doris answers (be schema_columns_scanner.cpp).
func TestInformationSchemaConnectorQueries(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if err := s.CreateTable(testDB, "CREATE TABLE kv (k BIGINT NOT NULL, amount DECIMAL(12,2), flag BOOLEAN, big LARGEINT, ts DATETIME(3), note STRING) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	db := openMySQL(t, s)
	join := func(q string, args ...any) string {
		t.Helper()
		return strings.Join(queryStrings(t, db, q, args...), ";")
	}
	wantEq(t, "listDatabases", join("SELECT `SCHEMA_NAME` FROM `INFORMATION_SCHEMA`.`SCHEMATA`;"), "demo;information_schema;mysql")
	wantEq(t, "databaseExists", join("SELECT `SCHEMA_NAME` FROM `INFORMATION_SCHEMA`.`SCHEMATA` WHERE SCHEMA_NAME = 'demo'"), "demo")
	wantEq(t, "listTables (prepared)", join("SELECT TABLE_NAME FROM information_schema.`TABLES` WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", "demo"), "kv;orders")
	wantEq(t, "getTableFieldNames", join("SELECT COLUMN_NAME,DATA_TYPE FROM `information_schema`.`COLUMNS` WHERE `TABLE_SCHEMA`= 'demo' AND `TABLE_NAME`= 'kv'"),
		"k|bigint;amount|decimal;flag|tinyint;big|bigint unsigned;ts|datetime;note|varchar")
	wantEq(t, "catalog getTable", join("SELECT COLUMN_NAME,DATA_TYPE,COLUMN_SIZE,DECIMAL_DIGITS FROM `information_schema`.`COLUMNS` WHERE `TABLE_SCHEMA`= 'demo' AND `TABLE_NAME`= 'kv'"),
		"k|bigint|19|0;amount|decimal|12|2;flag|tinyint|0|0;big|bigint unsigned|39|0;ts|datetime|19|NULL;note|varchar|2147483643|NULL")
	wantEq(t, "checkColumnExists", join("SELECT COLUMN_NAME FROM information_schema.`COLUMNS` WHERE TABLE_SCHEMA = 'demo' AND TABLE_NAME = 'kv' AND COLUMN_NAME = 'amount'"), "amount")
	wantEq(t, "kafka checkColumnExists (prepared)", join("SELECT COLUMN_NAME FROM information_schema.`COLUMNS` WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?", "demo", "kv", "nope"), "")
	wantEq(t, "COLUMNS details", join("SELECT ORDINAL_POSITION, IS_NULLABLE, COLUMN_TYPE, COLUMN_KEY FROM information_schema.COLUMNS WHERE TABLE_NAME = 'kv' AND COLUMN_NAME IN ('k', 'amount', 'ts') ORDER BY ORDINAL_POSITION"),
		"1|NO|bigint(20)|UNI;2|YES|decimalv3(12, 2)|;5|YES|datetime(3)|")
	wantEq(t, "TABLES row", join("SELECT TABLE_CATALOG, TABLE_TYPE, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'demo' AND TABLE_NAME = 'kv'"), "internal|BASE TABLE|Doris")
	// information_schema follows the catalog: a new column shows at once.
	mustExec(t, db, "ALTER TABLE kv ADD COLUMN extra INT")
	wantEq(t, "column added", join("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'kv'"), "7")
}
