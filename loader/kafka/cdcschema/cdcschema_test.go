package cdcschema

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fieldsOf(t *testing.T) []Field {
	t.Helper()
	fs, err := RowFields(readFile(t, "customers_value.json"))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestDorisTypeOfDebeziumEvent(t *testing.T) {
	want := map[string]string{
		"id": "INT", "first_name": "VARCHAR(765)", "note": "STRING", "visits": "BIGINT", "balance": "DECIMAL(12,2)",
		"born": "DATE", "created": "DATETIME(3)", "updated": "DATETIME(6)", "seen": "DATETIME(6)", "attrs": "JSON",
		"active": "BOOLEAN", "score": "DOUBLE", "level": "SMALLINT", "ratio": "DOUBLE", "tags": "ARRAY<INT>",
	}
	fs := fieldsOf(t)
	if len(fs) != len(want) {
		t.Fatalf("got %d fields, want %d", len(fs), len(want))
	}
	for _, f := range fs {
		got, err := DorisType(f)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if got != want[f.Name] {
			t.Errorf("%s: got %s, want %s", f.Name, got, want[f.Name])
		}
		// Every mapped type is one Doris's DDL parser accepts.
		if _, err := schema.ParseCreateTable("CREATE TABLE t (c " + got + ")"); err != nil {
			t.Errorf("%s: %s does not parse as a Doris type: %v", f.Name, got, err)
		}
	}
}

func TestDorisTypeLengthsAndLimits(t *testing.T) {
	str := func(n string) Field {
		return Field{Name: "s", Type: "string", Parameters: map[string]string{ParamSourceLength: n}}
	}
	dec := func(p, s string) Field {
		return Field{Name: "d", Type: "bytes", Semantic: ConnectDecimal, Parameters: map[string]string{ParamPrecision: p, ParamScale: s}}
	}
	cases := []struct {
		f    Field
		want string
	}{
		{str("1"), "VARCHAR(3)"},
		{str("21844"), "VARCHAR(65532)"},
		{str("21845"), "STRING"}, // 65535 > 65533 (MysqlType.java)
		{str("0"), "STRING"},
		{dec("38", "10"), "DECIMAL(38,10)"},
		{dec("39", "0"), "STRING"},
		{Field{Name: "d", Type: "bytes", Semantic: ConnectDecimal, Parameters: map[string]string{ParamScale: "4"}}, "DECIMAL(38,4)"},
		{Field{Name: "t", Type: "int64", Semantic: DebeziumTimestamp, Parameters: map[string]string{ParamSourceLength: "2"}}, "DATETIME(2)"},
		{Field{Name: "t", Type: "int64", Semantic: DebeziumNanoTimestamp, Parameters: map[string]string{ParamSourceScale: "9"}}, "DATETIME(6)"},
		{Field{Name: "t", Type: "int64", Semantic: DebeziumMicroTime}, "STRING"},
		{Field{Name: "y", Type: "int32", Semantic: DebeziumYear}, "INT"},
		{Field{Name: "b", Type: "int8"}, "TINYINT"},
		{Field{Name: "f", Type: "float32"}, "FLOAT"},
		{Field{Name: "m", Type: "map"}, "STRING"},
	}
	for _, c := range cases {
		got, err := DorisType(c.f)
		if err != nil || got != c.want {
			t.Errorf("%+v: got %q, %v; want %q", c.f, got, err, c.want)
		}
	}
	if _, err := DorisType(Field{Name: "x", Type: "int128"}); err == nil || !strings.Contains(err.Error(), "x") {
		t.Fatalf("unknown type: got %v, want an error naming the field", err)
	}
}

func TestRowFieldsWithoutSchema(t *testing.T) {
	for _, v := range []string{`{"op":"c","after":{"id":1}}`, ``} {
		if _, err := RowFields([]byte(v)); !errors.Is(err, ErrNoSchema) {
			t.Errorf("%q: got %v, want ErrNoSchema", v, err)
		}
	}
	if _, err := RowFields([]byte(`{"schema":{"type":"struct","fields":[{"type":"string","field":"op"}]}}`)); err == nil {
		t.Fatal("a schema without after/before: want an error")
	}
}

func TestNewTableFromDebeziumSchema(t *testing.T) {
	keys, err := KeyFields(readFile(t, "customers_key.json"))
	if err != nil || len(keys) != 1 || keys[0] != "id" {
		t.Fatalf("KeyFields: %v %v", keys, err)
	}
	tbl, err := NewTable("inventory", "customers", fieldsOf(t), keys, TableOptions{Buckets: 4, Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	ddl := tbl.CreateTableIfNotExistsSQL()
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS `inventory`.`customers` (",
		"`id` int NOT NULL,", "`first_name` varchar(765) NULL,", "`balance` decimal(12,2) NULL,",
		"UNIQUE KEY(`id`)", "DISTRIBUTED BY HASH(`id`) BUCKETS 4",
		`"enable_unique_key_merge_on_write" = "true"`, `"light_schema_change" = "true"`, `"replication_num" = "1"`,
	} {
		if !strings.Contains(ddl, want) {
			t.Errorf("DDL lacks %q:\n%s", want, ddl)
		}
	}
	st, err := schema.ParseCreateTableStmt(ddl)
	if err != nil {
		t.Fatalf("the printed DDL does not parse: %v\n%s", err, ddl)
	}
	if err := st.Table.Validate(); err != nil {
		t.Fatalf("the printed DDL is not a valid Doris table: %v\n%s", err, ddl)
	}
	if !st.IfNotExists || !st.Table.MergeOnWrite() || st.Table.Keys != schema.UniqueKeys {
		t.Fatalf("parsed back: %+v", st)
	}
}

func TestNewTableKeyOrderAndStringKey(t *testing.T) {
	fs := []Field{{Name: "v", Type: "int64"}, {Name: "code", Type: "string"}, {Name: "region", Type: "int32"}}
	tbl, err := NewTable("d", "t", fs, []string{"region", "code"}, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.Columns {
		names = append(names, c.Name+" "+c.Type)
	}
	if got := strings.Join(names, ","); got != "region INT,code VARCHAR(65533),v BIGINT" {
		t.Fatalf("columns: %s (keys must lead, a STRING key is VARCHAR(65533))", got)
	}
	if tbl.Buckets != 0 || !strings.Contains(tbl.CreateTableSQL(), "BUCKETS AUTO") {
		t.Fatalf("buckets 0 must print BUCKETS AUTO:\n%s", tbl.CreateTableSQL())
	}
	if _, err := NewTable("d", "t", fs, nil, TableOptions{}); err == nil {
		t.Fatal("no key: want an error")
	}
	if _, err := NewTable("d", "t", []Field{{Name: "k", Type: "float64"}}, []string{"k"}, TableOptions{}); err == nil {
		t.Fatal("DOUBLE key: want an error")
	}
	if _, err := NewTable("d", "t", fs, []string{"missing"}, TableOptions{}); err == nil {
		t.Fatal("key not in the row: want an error")
	}
}

func TestPlanAddsWidensAndRefuses(t *testing.T) {
	tbl, err := schema.ParseCreateTable("CREATE TABLE `d`.`t` (`id` int NOT NULL, `name` varchar(30) NULL, `n` bigint NULL, " +
		"`amt` decimal(12,2) NULL, `extra` int NULL) UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1")
	if err != nil {
		t.Fatal(err)
	}
	ln := func(n string) map[string]string { return map[string]string{ParamSourceLength: n} }
	fields := []Field{
		{Name: "id", Type: "int16"},                          // held: INT holds SMALLINT
		{Name: "name", Type: "string", Parameters: ln("20")}, // VARCHAR(60) widens VARCHAR(30)
		{Name: "n", Type: "int32"},                           // held
		{Name: "amt", Type: "bytes", Semantic: ConnectDecimal, Parameters: map[string]string{ParamPrecision: "10", ParamScale: "2"}},
		{Name: "city", Type: "string"},                        // added
		{Name: "born", Type: "int32", Semantic: DebeziumDate}, // added
	}
	ch, err := Plan(tbl, fields)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Add) != 2 || ch.Add[0].Name != "city" || ch.Add[0].Type != "STRING" || !ch.Add[0].Nullable ||
		ch.Add[1].Name != "born" || ch.Add[1].Type != "DATE" {
		t.Fatalf("Add: %+v", ch.Add)
	}
	if len(ch.Widen) != 1 || ch.Widen[0].Name != "name" || ch.Widen[0].Type != "VARCHAR(60)" {
		t.Fatalf("Widen: %+v", ch.Widen)
	}
	got := schema.AlterColumnsSQL("d", "t", ch.Add, ch.Widen)
	want := "ALTER TABLE `d`.`t` ADD COLUMN `city` string NULL, ADD COLUMN `born` date NULL, MODIFY COLUMN `name` varchar(60) NULL"
	if got != want {
		t.Fatalf("DDL:\n got %s\nwant %s", got, want)
	}
	// Nothing to do the second time (idempotent after the ALTER).
	ch2, err := Plan(tbl, fields[:4])
	if err != nil || !ch2.Empty() && len(ch2.Widen) != 1 {
		t.Fatalf("re-plan: %+v %v", ch2, err)
	}

	_, err = Plan(tbl, []Field{{Name: "n", Type: "string"}, {Name: "id", Type: "int64"}})
	var tce *TypeChangeError
	if !errors.As(err, &tce) {
		t.Fatalf("got %v, want a *TypeChangeError", err)
	}
	for _, w := range []string{"d.t", "column n", "BIGINT", "STRING", "column id", "INT to BIGINT"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		have, in string
		want     Fit
	}{
		{"VARCHAR(10)", "VARCHAR(10)", Holds},
		{"varchar(10)", "VARCHAR(5)", Holds},
		{"VARCHAR(10)", "VARCHAR(11)", Widens},
		{"VARCHAR(10)", "STRING", Incompatible},
		{"STRING", "VARCHAR(65533)", Holds},
		{"TEXT", "STRING", Holds},
		{"BIGINT", "INT", Holds},
		{"INT", "BIGINT", Incompatible}, // a heavy schema change
		{"DECIMALV3(12,2)", "DECIMAL(10,2)", Holds},
		{"DECIMAL(12,2)", "DECIMAL(12,3)", Incompatible},
		{"DATETIMEV2(6)", "DATETIME(3)", Holds},
		{"DATETIME(0)", "DATETIME(3)", Incompatible},
		{"DATEV2", "DATE", Holds},
		{"DOUBLE", "FLOAT", Holds},
		{"BOOLEAN", "TINYINT", Incompatible},
		{"JSONB", "JSON", Holds},
		{"INT", "STRING", Incompatible},
	}
	for _, c := range cases {
		if got := Compare(c.have, c.in); got != c.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", c.have, c.in, got, c.want)
		}
	}
}

// A STRING key became VARCHAR(65533) at creation: the same field later
// needs nothing (not a type change).
func TestPlanStringKey(t *testing.T) {
	fs := []Field{{Name: "code", Type: "string"}, {Name: "v", Type: "int64"}}
	tbl, err := NewTable("d", "t", fs, []string{"code"}, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Plan(tbl, fs)
	if err != nil || !ch.Empty() {
		t.Fatalf("Plan on the created table: %+v %v", ch, err)
	}
}
