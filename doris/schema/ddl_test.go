package schema

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

// The exact DDL from the user article the brief quotes.
const articleDDL = `CREATE TABLE order_state_eos (order_id BIGINT, op_version BIGINT, status VARCHAR(16), amount DECIMAL(12,2)) UNIQUE KEY(order_id) DISTRIBUTED BY HASH(order_id) BUCKETS 4 PROPERTIES ("enable_unique_key_merge_on_write" = "true", "function_column.sequence_col" = "op_version");`

func TestParseArticleDDL(t *testing.T) {
	t.Parallel()
	got, err := ParseCreateTable(articleDDL)
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		Name: "order_state_eos",
		Columns: []Column{
			{Name: "order_id", Type: "BIGINT", Nullable: true},
			{Name: "op_version", Type: "BIGINT", Nullable: true},
			{Name: "status", Type: "VARCHAR(16)", Nullable: true},
			{Name: "amount", Type: "DECIMAL(12,2)", Nullable: true},
		},
		Keys: UniqueKeys, KeyColumns: []string{"order_id"},
		DistributedBy: []string{"order_id"}, Buckets: 4,
		Properties: map[string]string{"enable_unique_key_merge_on_write": "true", "function_column.sequence_col": "op_version"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if got.SequenceColumn() != "op_version" || !got.HasSequence() || !got.MergeOnWrite() || !got.HasDeleteSign() {
		t.Fatalf("helpers: seq %q mow %v del %v", got.SequenceColumn(), got.MergeOnWrite(), got.HasDeleteSign())
	}
	wantSQL := "CREATE TABLE `order_state_eos` (\n" +
		"  `order_id` bigint NULL,\n" +
		"  `op_version` bigint NULL,\n" +
		"  `status` varchar(16) NULL,\n" +
		"  `amount` decimal(12,2) NULL\n" +
		") ENGINE=OLAP\n" +
		"UNIQUE KEY(`order_id`)\n" +
		"COMMENT 'OLAP'\n" +
		"DISTRIBUTED BY HASH(`order_id`) BUCKETS 4\n" +
		"PROPERTIES (\n" +
		"\"enable_unique_key_merge_on_write\" = \"true\",\n" +
		"\"function_column.sequence_col\" = \"op_version\"\n" +
		");"
	if s := got.CreateTableSQL(); s != wantSQL {
		t.Fatalf("CreateTableSQL:\n%s\nwant:\n%s", s, wantSQL)
	}
	assertRoundTrip(t, got)
}

// A SHOW CREATE TABLE text as Doris 2.1 prints it, with its own default
// properties, partitions and an aggregate model.
const showCreateDDL = "CREATE TABLE `events` (\n" +
	"  `dt` date NOT NULL COMMENT 'day',\n" +
	"  `k` varchar(64) NOT NULL,\n" +
	"  `cnt` bigint SUM NULL DEFAULT \"0\",\n" +
	"  `last` datetime(3) REPLACE NULL DEFAULT CURRENT_TIMESTAMP(3),\n" +
	"  `nn` int REPLACE_IF_NOT_NULL NULL,\n" +
	"  `mx` double MAX NULL,\n" +
	"  `mn` decimal(27,9) MIN NULL COMMENT 'it''s \\\\ \"min\"'\n" +
	") ENGINE=OLAP\n" +
	"AGGREGATE KEY(`dt`, `k`)\n" +
	"COMMENT 'event counts'\n" +
	"PARTITION BY RANGE(`dt`)\n" +
	"(PARTITION p20240101 VALUES [('2024-01-01'), ('2024-01-02')),\n" +
	"PARTITION p20240102 VALUES [('2024-01-02'), ('2024-01-03')))\n" +
	"DISTRIBUTED BY HASH(`k`) BUCKETS AUTO\n" +
	"PROPERTIES (\n" +
	"\"replication_allocation\" = \"tag.location.default: 1\",\n" +
	"\"min_load_replica_num\" = \"-1\",\n" +
	"\"storage_format\" = \"V2\"\n" +
	");"

func TestParseShowCreateTable(t *testing.T) {
	t.Parallel()
	got, err := ParseCreateTable(showCreateDDL)
	if err != nil {
		t.Fatal(err)
	}
	want := &Table{
		Name: "events",
		Columns: []Column{
			{Name: "dt", Type: "DATE", Comment: "day"},
			{Name: "k", Type: "VARCHAR(64)"},
			{Name: "cnt", Type: "BIGINT", Nullable: true, Agg: AggSum, Default: ptr("0")},
			{Name: "last", Type: "DATETIME(3)", Nullable: true, Agg: AggReplace, Default: ptr("CURRENT_TIMESTAMP(3)"), DefaultExpr: true},
			{Name: "nn", Type: "INT", Nullable: true, Agg: AggReplaceIfNotNull},
			{Name: "mx", Type: "DOUBLE", Nullable: true, Agg: AggMax},
			{Name: "mn", Type: "DECIMAL(27,9)", Nullable: true, Agg: AggMin, Comment: `it's \ "min"`},
		},
		Keys: AggregateKeys, KeyColumns: []string{"dt", "k"},
		DistributedBy: []string{"k"}, Buckets: 0, Comment: "event counts",
		Properties: map[string]string{"replication_allocation": "tag.location.default: 1", "min_load_replica_num": "-1", "storage_format": "V2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if got.HasSequence() || got.MergeOnWrite() || got.HasDeleteSign() {
		t.Fatal("aggregate table has no sequence, merge-on-write or delete sign")
	}
	assertRoundTrip(t, got)
}

func TestParseVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ddl   string
		check func(t *testing.T, st *CreateTableStmt)
	}{
		{"if not exists, qualified, backticks, comments", "-- leading comment\ncreate table if not exists `demo`.`my table` (/* c */ `k` int not null, v string default 'x' comment \"c\") duplicate key(k) distributed by random", func(t *testing.T, st *CreateTableStmt) {
			tb := st.Table
			if !st.IfNotExists || tb.Database != "demo" || tb.Name != "my table" {
				t.Fatalf("got %+v", st)
			}
			if tb.Columns[0].Nullable || tb.Columns[1].Type != "STRING" || *tb.Columns[1].Default != "x" || tb.Columns[1].Comment != "c" {
				t.Fatalf("columns %+v", tb.Columns)
			}
			if tb.DistributedBy != nil || tb.Buckets != DefaultBuckets {
				t.Fatalf("distribution %v %d", tb.DistributedBy, tb.Buckets)
			}
		}},
		{"no key clause: duplicate short key", "CREATE TABLE t (a INT, b BIGINT, c DATETIME, d INT) DISTRIBUTED BY HASH(a) BUCKETS 1", func(t *testing.T, st *CreateTableStmt) {
			if st.Table.Keys != DuplicateKeys || !reflect.DeepEqual(st.Table.KeyColumns, []string{"a", "b", "c"}) {
				t.Fatalf("keys %v %v", st.Table.Keys, st.Table.KeyColumns)
			}
		}},
		{"no key clause: stops at varchar", "CREATE TABLE t (a INT, s VARCHAR(10), c INT)", func(t *testing.T, st *CreateTableStmt) {
			if !reflect.DeepEqual(st.Table.KeyColumns, []string{"a", "s"}) {
				t.Fatalf("keys %v", st.Table.KeyColumns)
			}
			if st.Table.DistributedBy != nil || st.Table.Buckets != 0 {
				t.Fatalf("default distribution of a duplicate table: %v %d", st.Table.DistributedBy, st.Table.Buckets)
			}
		}},
		{"no key clause: stops before double, 36 bytes", "CREATE TABLE t (a LARGEINT, b LARGEINT, c LARGEINT)", func(t *testing.T, st *CreateTableStmt) {
			if !reflect.DeepEqual(st.Table.KeyColumns, []string{"a", "b"}) {
				t.Fatalf("keys %v", st.Table.KeyColumns)
			}
		}},
		{"no key clause with aggregation: aggregate", "CREATE TABLE t (k INT, v BIGINT SUM DEFAULT \"0\")", func(t *testing.T, st *CreateTableStmt) {
			tb := st.Table
			if tb.Keys != AggregateKeys || !reflect.DeepEqual(tb.KeyColumns, []string{"k"}) || !reflect.DeepEqual(tb.DistributedBy, []string{"k"}) {
				t.Fatalf("%+v", tb)
			}
		}},
		{"types", "CREATE TABLE t (a TINYINT, b SMALLINT, c INT(11), d LARGEINT, e FLOAT, f DOUBLE, g DECIMAL(27, 9), h CHAR(10), i VARCHAR(65533), j DATE, k DATETIME, l DATETIME(3), m BOOLEAN, n STRING, o TEXT, p JSON, q ARRAY<int>, r MAP<string, Array<Int>>, s STRUCT<a:int, `b c`:varchar(3)>) DUPLICATE KEY(a)", func(t *testing.T, st *CreateTableStmt) {
			var types []string
			for _, c := range st.Table.Columns {
				types = append(types, c.Type)
			}
			want := []string{"TINYINT", "SMALLINT", "INT(11)", "LARGEINT", "FLOAT", "DOUBLE", "DECIMAL(27,9)", "CHAR(10)", "VARCHAR(65533)", "DATE", "DATETIME", "DATETIME(3)", "BOOLEAN", "STRING", "TEXT", "JSON", "ARRAY<INT>", "MAP<STRING,ARRAY<INT>>", "STRUCT<a:INT,`b c`:VARCHAR(3)>"}
			if !reflect.DeepEqual(types, want) {
				t.Fatalf("types %q", types)
			}
		}},
		{"defaults and skipped parts", "CREATE TABLE t (k BIGINT NOT NULL AUTO_INCREMENT(1), ts DATETIME DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, n INT DEFAULT -1, z INT DEFAULT NULL, INDEX idx (k) USING INVERTED COMMENT 'i') ENGINE = olap UNIQUE KEY(k) AUTO PARTITION BY RANGE (date_trunc(`ts`, 'day')) () DISTRIBUTED BY HASH(k) BUCKETS 3 ROLLUP (r1 (k)) PROPERTIES ('replication_num' = '1')", func(t *testing.T, st *CreateTableStmt) {
			tb := st.Table
			if len(tb.Columns) != 4 || *tb.Columns[1].Default != "CURRENT_TIMESTAMP" || !tb.Columns[1].DefaultExpr || *tb.Columns[2].Default != "-1" || tb.Columns[3].Default != nil {
				t.Fatalf("%+v", tb.Columns)
			}
			if tb.Properties["replication_num"] != "1" {
				t.Fatalf("%v", tb.Properties)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, err := ParseCreateTableStmt(tc.ddl)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, st)
			if err := st.Table.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			assertRoundTrip(t, st.Table)
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ ddl, want string }{
		{"", "expected CREATE"},
		{"CREATE VIEW v AS SELECT 1", "expected TABLE after CREATE"},
		{"CREATE TABLE t", `expected "(" after the table name`},
		{"CREATE TABLE t ()", "expected a column name or INDEX"},
		{"CREATE TABLE t (a FOO)", "unknown data type FOO"},
		{"CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKET 4", "line 1, column 47 near \"BUCKET 4\""},
		{"CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 0", "greater than zero"},
		{"CREATE TABLE t (a INT) ENGINE=mysql", "only ENGINE=OLAP"},
		{"CREATE TABLE t (a INT, b 'x')", "expected a column type"},
		{"CREATE TABLE t (a INT SUM MAX)", "duplicate aggregation"},
		{"CREATE TABLE t (a INT) PROPERTIES (x = 'y')", "property name as a quoted string"},
		{"CREATE TABLE t (a VARCHAR(10) COMMENT 'x)", "unterminated string"},
		{"CREATE TABLE t (a INT) /* x", "unterminated comment"},
		{"CREATE TABLE t (a INT);\nDROP TABLE t", "line 2, column 1"},
		{"CREATE TABLE t (a DECIMAL(1,2,3))", "at most 2 parameter"},
	}
	for _, tc := range tests {
		_, err := ParseCreateTable(tc.ddl)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseCreateTable(%q) = %v, want *ParseError", tc.ddl, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCreateTable(%q) = %q, want it to contain %q", tc.ddl, err, tc.want)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ ddl, want string }{
		{"CREATE TABLE t (a INT, a INT) DUPLICATE KEY(a)", "Duplicate column name 'a'"},
		{"CREATE TABLE t (a INT, b INT) DUPLICATE KEY(b)", "Key columns should be a ordered prefix of the schema. KeyColumns[0] (starts from zero) is b, but corresponding column is a"},
		{"CREATE TABLE t (a INT, b INT) DUPLICATE KEY(x)", "Key column[x] doesn't exist."},
		{"CREATE TABLE t (a INT, b INT) AGGREGATE KEY(a) DISTRIBUTED BY HASH(a)", "AGG_KEYS table should specify aggregate type for non-key column[b]"},
		{"CREATE TABLE t (a INT SUM, b INT SUM) AGGREGATE KEY(a) DISTRIBUTED BY HASH(a)", "Key column a should not specify aggregate type SUM"},
		{"CREATE TABLE t (a INT, b INT SUM) UNIQUE KEY(a) DISTRIBUTED BY HASH(a)", "UNIQUE_KEYS table should not specify aggregate type for non-key column[b]"},
		{"CREATE TABLE t (a INT, b INT MAX) DUPLICATE KEY(a)", "DUP_KEYS table should not specify aggregate type for non-key column[b]"},
		{"CREATE TABLE t (a INT, b INT) DUPLICATE KEY(a) PROPERTIES (\"function_column.sequence_col\" = \"b\")", "The sequence column only support UNIQUE_KEYS"},
		{"CREATE TABLE t (a INT, b INT) UNIQUE KEY(a) DISTRIBUTED BY HASH(a) PROPERTIES (\"function_column.sequence_col\" = \"c\")", "The specified sequence column[c] not exists"},
		{"CREATE TABLE t (a INT, b STRING) UNIQUE KEY(a) DISTRIBUTED BY HASH(a) PROPERTIES (\"function_column.sequence_col\" = \"b\")", "Sequence type only support integer types and date types"},
		{"CREATE TABLE t (a INT, b INT) UNIQUE KEY(a) DISTRIBUTED BY RANDOM", "Create unique keys table should not contain random distribution desc"},
		{"CREATE TABLE t (a INT, b INT) UNIQUE KEY(a) DISTRIBUTED BY HASH(b)", "Distribution column[b] is not key column"},
		{"CREATE TABLE t (a INT, b INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(c)", "Distribution column(c) doesn't exist."},
		{"CREATE TABLE t (a DOUBLE, b INT)", "The olap table first column could not be float"},
		{"CREATE TABLE t (a INT, b INT) DUPLICATE KEY(a) PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\")", "only support unique key table"},
	}
	for _, tc := range tests {
		tb, err := ParseCreateTable(tc.ddl)
		if err != nil {
			t.Errorf("ParseCreateTable(%q): %v", tc.ddl, err)
			continue
		}
		err = tb.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%q) = %v, want %q", tc.ddl, err, tc.want)
		}
	}
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	tb, err := ParseCreateTable(`CREATE TABLE t (Id INT, v INT) UNIQUE KEY(Id) DISTRIBUTED BY HASH(Id) PROPERTIES ("function_column.sequence_type" = "int", "enable_unique_key_merge_on_write" = "false")`)
	if err != nil {
		t.Fatal(err)
	}
	if c, i, ok := tb.Column("ID"); !ok || i != 0 || c.Name != "Id" {
		t.Fatalf("Column(ID) = %+v %d %v", c, i, ok)
	}
	if _, i, ok := tb.Column("nope"); ok || i != -1 {
		t.Fatal("Column(nope) found")
	}
	if !tb.IsKey("id") || tb.IsKey("v") {
		t.Fatal("IsKey")
	}
	// docs/doris-facts.md §7: sequence_type means the hidden sequence column.
	if tb.SequenceColumn() != SequenceColumn || !tb.HasSequence() {
		t.Fatalf("SequenceColumn = %q", tb.SequenceColumn())
	}
	if tb.MergeOnWrite() {
		t.Fatal("merge-on-write disabled by property")
	}
	tb.Properties = map[string]string{}
	if !tb.MergeOnWrite() || tb.HasSequence() {
		t.Fatal("default unique table: merge-on-write, no sequence")
	}
}

func assertRoundTrip(t *testing.T, tb *Table) {
	t.Helper()
	sql := tb.CreateTableSQL()
	back, err := ParseCreateTable(sql)
	if err != nil {
		t.Fatalf("ParseCreateTable(CreateTableSQL()) = %v\n%s", err, sql)
	}
	if !reflect.DeepEqual(back, tb) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v\nSQL:\n%s", back, tb, sql)
	}
}
