package kafka

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// dbzField is one field of a Debezium row schema in the JSON converter's form.
type dbzField struct{ name, typ, extra string }

func dbzSchema(fields []dbzField) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = fmt.Sprintf(`{"type":%q,"optional":true,"field":%q%s}`, f.typ, f.name, f.extra)
	}
	row := `{"type":"struct","fields":[` + strings.Join(parts, ",") + `],"optional":true,"name":"srv.inv.customers.Value"`
	return `{"type":"struct","fields":[` + row + `,"field":"before"},` + row + `,"field":"after"},` +
		`{"type":"string","optional":false,"field":"op"}],"optional":false,"name":"srv.inv.customers.Envelope"}`
}

var (
	customersV1 = []dbzField{{"id", "int64", ""}, {"name", "string", `,"parameters":{"__debezium.source.column.length":"10"}`}}
	customersV2 = append(append([]dbzField(nil), customersV1...), dbzField{"city", "string", ""})
	customerKey = `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"srv.inv.customers.Key"},"payload":{"id":%d}}`
)

// dbzRecord is a Debezium create event with schema for row (a JSON object).
func dbzRecord(fields []dbzField, id int, row string) *kgo.Record {
	v := `{"schema":` + dbzSchema(fields) + `,"payload":{"before":null,"after":` + row + `,"op":"c"}}`
	return &kgo.Record{Key: fmt.Appendf(nil, customerKey, id), Value: []byte(v)}
}

// cdcEnv is an env loading Debezium records into a table the sink creates.
func cdcEnv(t *testing.T) *env {
	e := newEnv(t, 1)
	e.table, e.format, e.props = "customers", FormatDebezium, RequiredProperties(FormatDebezium)
	return e
}

func (e *env) cdcConnector(ld *loader.Loader, rec *recorder, evidence func(kind, ddl string)) (*Connector, *TableEvolver) {
	e.t.Helper()
	ev := &TableEvolver{DDL: e.client, DB: testDB, Table: e.table, Create: true, AddColumns: true,
		TableOptions: cdcschema.TableOptions{Buckets: 1, Replication: 1}, Evidence: evidence}
	cfg := e.config()
	cfg.CheckpointMaxRows = 100
	c, err := New(cfg, ld, WithRecoverBackoff(0, 0), WithSchemaEvolver(ev), WithOnCheckpoint(rec.add))
	if err != nil {
		e.t.Fatal(err)
	}
	return c, ev
}

// The first record's Debezium schema creates the table (Unique Key on the
// record key, merge-on-write); a later record whose schema gains a field
// adds the column before the load that needs it, deciding the rows before
// it first; everything lands once, the new field's values too, and the
// ledger holds the DDL of both changes.
func TestCreateTableAndAddColumnFromDebeziumSchema(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	e.produce(
		dbzRecord(customersV1, 1, `{"id":1,"name":"ann"}`),
		dbzRecord(customersV1, 2, `{"id":2,"name":"bob"}`),
		dbzRecord(customersV2, 3, `{"id":3,"name":"cid","city":"Oslo"}`),
		dbzRecord(customersV2, 4, `{"id":4,"name":"dan","city":"Rome"}`),
	)
	ld := e.loader(nil)
	var rec recorder
	c, _ := e.cdcConnector(ld, &rec, ld.RecordTableChange)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tbl, err := e.srv.Schema(testDB, e.table)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Keys != "UNIQUE" || !tbl.MergeOnWrite() || strings.Join(tbl.KeyColumns, ",") != "id" {
		t.Fatalf("created table: %s", tbl.CreateTableSQL())
	}
	var cols []string
	for _, col := range tbl.Columns {
		cols = append(cols, col.Name+" "+col.Type)
	}
	if got := strings.Join(cols, ","); got != "id BIGINT,name VARCHAR(30),city STRING" {
		t.Fatalf("columns %s", got)
	}
	rows, err := e.srv.Rows(testDB, e.table)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); got != "[[1 ann <nil>] [2 bob <nil>] [3 cid Oslo] [4 dan Rome]]" {
		t.Fatalf("rows %s", got)
	}
	st := rec.stats()
	if len(st) != 2 || st[0].Rows != 2 || st[1].Rows != 2 {
		t.Fatalf("checkpoints %+v, want the rows before the schema change decided on their own (2 + 2)", st)
	}
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, en := range entries {
		if en.Event == ledger.EventTableCreated || en.Event == ledger.EventSchemaChanged {
			changes = append(changes, en.Event+": "+firstLine(en.Note))
		}
	}
	want := []string{"table_created: CREATE TABLE IF NOT EXISTS `db`.`customers` (",
		"schema_changed: ALTER TABLE `db`.`customers` ADD COLUMN `city` string NULL"}
	if strings.Join(changes, "|") != strings.Join(want, "|") {
		t.Fatalf("ledger changes:\n%s\nwant\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
}

// A crash after the ALTER and before the commit of the checkpoint decided
// for it: the restart commits that checkpoint, finds the column there
// (nothing to do, no second ALTER or ledger entry) and loads the rest once.
func TestSchemaEvolutionCrashBetweenAlterAndCommit(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	e.produce(
		dbzRecord(customersV1, 1, `{"id":1,"name":"ann"}`),
		dbzRecord(customersV2, 2, `{"id":2,"name":"bob","city":"Oslo"}`),
		dbzRecord(customersV2, 3, `{"id":3,"name":"cid","city":"Rome"}`),
	)
	fps := loader.NewFailpoints()
	hold, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	ld := e.loader(fps)
	var rec recorder
	var crash *loader.Handle
	c, _ := e.cdcConnector(ld, &rec, func(kind, ddl string) {
		ld.RecordTableChange(kind, ddl)
		if kind == ledger.EventSchemaChanged {
			// The ALTER is done; checkpoint 1 is decided, its commit held.
			if crash, err = fps.Arm(loader.FailAfterAnnounce, loader.Crash()); err != nil {
				t.Error(err)
			}
		}
	})
	err = e.runToEnd(ctxFor(t), c)
	hold.Release()
	if !errors.Is(err, loader.ErrCrashed) || crash == nil || crash.Hits() != 1 {
		t.Fatalf("Run: %v, want the crash after the ALTER", err)
	}
	if hold.Hits() != 1 {
		t.Fatalf("the commit of checkpoint 1 was not held (hits %d)", hold.Hits())
	}
	if n := e.ids(); len(n) != 0 {
		t.Fatalf("rows visible before the restart: %v (checkpoint 1 must not be committed yet)", n)
	}

	ld2 := e.loader(nil)
	var rec2 recorder
	c2, _ := e.cdcConnector(ld2, &rec2, ld2.RecordTableChange)
	if err := e.runToEnd(ctxFor(t), c2); err != nil {
		t.Fatalf("Run after restart: %v", err)
	}
	rows, err := e.srv.Rows(testDB, e.table)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); got != "[[1 ann <nil>] [2 bob Oslo] [3 cid Rome]]" {
		t.Fatalf("rows %s", got)
	}
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, en := range entries {
		if en.Event == ledger.EventSchemaChanged {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d schema_changed entries, want 1 (the restart finds the column and changes nothing)", n)
	}
}

// A field whose type changes incompatibly stops the run with an error
// naming the table, column, old and new type; nothing of the record loads.
func TestSchemaEvolutionRefusesIncompatibleType(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	changed := []dbzField{{"id", "int64", ""}, {"name", "int32", ""}}
	e.produce(
		dbzRecord(customersV1, 1, `{"id":1,"name":"ann"}`),
		dbzRecord(changed, 2, `{"id":2,"name":7}`),
	)
	ld := e.loader(nil)
	var rec recorder
	c, _ := e.cdcConnector(ld, &rec, ld.RecordTableChange)
	err := e.runToEnd(ctxFor(t), c)
	var tce *cdcschema.TypeChangeError
	if !errors.As(err, &tce) || tce.Table != "db.customers" || tce.Column != "name" || tce.OldType != "VARCHAR(30)" || tce.NewType != "INT" {
		t.Fatalf("Run: %v, want a TypeChangeError for db.customers.name VARCHAR(30) → INT", err)
	}
	if !strings.Contains(err.Error(), "orders/0@1") {
		t.Fatalf("error %q does not name the record", err)
	}
	if got := fmt.Sprint(e.ids()); got != "map[1:1]" {
		t.Fatalf("rows %s, want only id 1 (decided before the change)", got)
	}
}

// Schema-less JSON rows: a new field with a value adds a nullable column
// of the inferred type before its row loads; a field that is only ever null
// adds nothing.
func TestSchemaEvolutionJSONFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produce(
		&kgo.Record{Value: []byte(`{"id":1,"v":"a"}`)},
		&kgo.Record{Value: []byte(`{"id":2,"v":"b","qty":5,"note":null}`)},
		&kgo.Record{Value: []byte(`{"id":3,"v":"c","qty":6,"price":1.5,"tags":["x"]}`)},
	)
	ld := e.loader(nil)
	ev := &TableEvolver{DDL: e.client, DB: testDB, Table: e.table, AddColumns: true, Evidence: ld.RecordTableChange}
	cfg := e.config()
	cfg.CheckpointMaxRows = 100
	c, err := New(cfg, ld, WithRecoverBackoff(0, 0), WithSchemaEvolver(ev), WithTableColumns([]string{"id", "v"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tbl, err := e.srv.Schema(testDB, e.table)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, col := range tbl.Columns {
		cols = append(cols, col.Name+" "+col.Type)
	}
	if got := strings.Join(cols, ","); got != "id BIGINT,v VARCHAR(32),qty BIGINT,price DOUBLE,tags JSON" {
		t.Fatalf("columns %s", got)
	}
	rows, err := e.srv.Rows(testDB, e.table)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); !strings.Contains(got, "[2 b 5 <nil> <nil>]") || !strings.Contains(got, "[3 c 6 1.5") {
		t.Fatalf("rows %s", got)
	}
	if got := c.Metrics().UnknownFields.Load(); got != 4 {
		t.Fatalf("unknown_fields %d, want 4 (qty, note; price, tags: counted before they were added)", got)
	}
}

// The steady state of schema tracking (the same schema block, known
// fields) allocates nothing per record.
func TestSchemaTrackingSteadyStateAllocs(t *testing.T) {
	conv, err := NewConverter(ConvertConfig{Format: FormatDebezium})
	if err != nil {
		t.Fatal(err)
	}
	conv.TrackSchemas()
	conv.WatchFields([]string{"id", "name", "city"}, nil, nil)
	r := dbzRecord(customersV2, 1, `{"id":1,"name":"ann","city":"Oslo"}`)
	if _, err := conv.Convert(r); err != nil {
		t.Fatal(err)
	}
	if _, changed := conv.SchemaChanged(); !changed {
		t.Fatal("the first schema block must count as a change")
	}
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := conv.Convert(r); err != nil {
			t.Fatal(err)
		}
		if _, changed := conv.SchemaChanged(); changed || conv.HasUnknownFields() {
			t.Fatal("steady state reported a change")
		}
	})
	if allocs != 0 && !raceEnabled {
		t.Fatalf("%.1f allocs per record, want 0", allocs)
	}
	r2 := dbzRecord(customersV1, 2, `{"id":2,"name":"bob"}`)
	if _, err := conv.Convert(r2); err != nil {
		t.Fatal(err)
	}
	if _, changed := conv.SchemaChanged(); !changed {
		t.Fatal("another schema block must count as a change")
	}
}

// BenchmarkConvertDebeziumTracked: Convert of a Debezium record with its
// schema block, schema tracking and the field watch on (the steady state of
// records.schema_evolution), and with a Date and a MicroTimestamp rewritten.
func BenchmarkConvertDebeziumTracked(b *testing.B) {
	temporal := append(append([]dbzField(nil), customersV2...), dbzField{"born", "int32", `,"name":"io.debezium.time.Date"`},
		dbzField{"seen", "int64", `,"name":"io.debezium.time.MicroTimestamp"`})
	for _, mode := range []string{"plain", "tracked", "tracked+values"} {
		b.Run(mode, func(b *testing.B) {
			conv, err := NewConverter(ConvertConfig{Format: FormatDebezium})
			if err != nil {
				b.Fatal(err)
			}
			conv.WatchFields([]string{"id", "name", "city", "born", "seen"}, nil, nil)
			if mode != "plain" {
				conv.TrackSchemas()
			}
			if mode == "tracked+values" {
				fs, err := cdcschema.RowFieldsOfSchema([]byte(dbzSchema(temporal)))
				if err != nil {
					b.Fatal(err)
				}
				conv.SetValueConversions(fs, []schema.Column{{Name: "born", Type: "DATE"}, {Name: "seen", Type: "DATETIME(6)"}})
			}
			r := dbzRecord(temporal, 1, `{"id":1,"name":"ann","city":"Oslo","born":16816,"seen":1529476623000005}`)
			b.SetBytes(int64(len(r.Value)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conv.Convert(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A created table gets DATE / DATETIME / DECIMAL columns for Debezium's
// integer dates, epoch timestamps and base64 decimals, and the values are
// rewritten so that Doris parses them (not NULLs).
func TestCreatedTableLoadsDebeziumEncodings(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	fields := []dbzField{{"id", "int64", ""}, {"born", "int32", `,"name":"io.debezium.time.Date"`},
		{"seen", "int64", `,"name":"io.debezium.time.MicroTimestamp"`},
		{"amt", "bytes", `,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"}`}}
	e.produce(dbzRecord(fields, 1, `{"id":1,"born":16816,"seen":1529476623000005,"amt":"MDk="}`))
	ld := e.loader(nil)
	var rec recorder
	c, _ := e.cdcConnector(ld, &rec, ld.RecordTableChange)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tbl, err := e.srv.Schema(testDB, e.table)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, col := range tbl.Columns {
		cols = append(cols, col.Name+" "+col.Type)
	}
	if got := strings.Join(cols, ","); got != "id BIGINT,born DATE,seen DATETIME(6),amt DECIMAL(10,2)" {
		t.Fatalf("columns %s", got)
	}
	rows, err := e.srv.Rows(testDB, e.table)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rows)
	for _, w := range []string{"2016-01-16", "2018-06-20 06:37:03.000005", "123.45"} {
		if !strings.Contains(got, w) {
			t.Fatalf("rows %s lack %s", got, w)
		}
	}
}

// A table to create from a record without a Connect schema stops the run
// at once (retrying cannot help), naming the record and the converter
// setting.
func TestCreateTableWithoutSchemaStops(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	e.produce(&kgo.Record{Value: []byte(`{"op":"c","after":{"id":1}}`)})
	ld := e.loader(nil)
	var rec recorder
	c, _ := e.cdcConnector(ld, &rec, ld.RecordTableChange)
	err := e.runToEnd(ctxFor(t), c)
	if !errors.Is(err, ErrSchemaRefused) || !strings.Contains(err.Error(), "orders/0@0") || !strings.Contains(err.Error(), "schemas.enable=true") {
		t.Fatalf("Run: %v, want ErrSchemaRefused naming the record and schemas.enable", err)
	}
	if got := c.Metrics().CheckpointFailures.Load(); got != 0 {
		t.Fatalf("%d checkpoint failures: the refusal must not be retried", got)
	}
}
