package run

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// dbzValue is a Debezium create event with its Connect schema (fields of
// the row image as `"name":"type"` pairs).
func dbzValue(fields [][2]string, row string) []byte {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = fmt.Sprintf(`{"type":%q,"optional":true,"field":%q}`, f[1], f[0])
	}
	img := `{"type":"struct","optional":true,"fields":[` + strings.Join(parts, ",") + `]`
	schema := `{"type":"struct","fields":[` + img + `,"field":"before"},` + img + `,"field":"after"},{"type":"string","field":"op"}]}`
	return []byte(`{"schema":` + schema + `,"payload":{"before":null,"after":` + row + `,"op":"c"}}`)
}

// run with doris.create_table and records.schema_evolution: add_columns
// creates the missing table from the first record (the start-up table
// checks do not refuse it), adds the column a later schema brings, and
// loads every row once; the ledger has both DDLs.
func TestRunCreatesAndEvolvesTable(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	e.table = "cust"
	e.env = []string{"DORIS_SINK_DORIS__CREATE_TABLE=true", "DORIS_SINK_DORIS__CREATE_TABLE_BUCKETS=1",
		"DORIS_SINK_DORIS__CREATE_TABLE_REPLICATION=1"}
	v1 := [][2]string{{"id", "int64"}, {"name", "string"}}
	v2 := append(append([][2]string(nil), v1...), [2]string{"age", "int32"})
	key := func(id int) []byte {
		return fmt.Appendf(nil, `{"schema":{"type":"struct","fields":[{"type":"int64","field":"id"}]},"payload":{"id":%d}}`, id)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rs := []*kgo.Record{
		{Key: key(1), Value: dbzValue(v1, `{"id":1,"name":"a"}`)},
		{Key: key(2), Value: dbzValue(v2, `{"id":2,"name":"b","age":30}`)},
		{Key: key(3), Value: dbzValue(v2, `{"id":3,"name":"c","age":40}`)},
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	sigs, tap, done := e.start("records: { format: debezium, schema_evolution: add_columns }\ndelivery: { checkpoint_max_rows: 2 }\n")
	tap.waitFor(t, "the checkpoint ending after record 3", func(m map[string]any) bool {
		return m["msg"] == "checkpoint decided" && strings.Contains(fmt.Sprint(m["end"]), "3")
	})
	sigs <- syscall.SIGTERM
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := e.srv.Rows("demo", "cust")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); got != "[[1 a <nil>] [2 b 30] [3 c 40]]" {
		t.Fatalf("rows %s", got)
	}
	entries, _, err := ledger.ReadFile(e.dir + "/data")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, en := range entries {
		if en.Event == ledger.EventTableCreated || en.Event == ledger.EventSchemaChanged {
			kinds = append(kinds, en.Event)
		}
	}
	if strings.Join(kinds, ",") != "table_created,schema_changed" {
		t.Fatalf("ledger table changes %v", kinds)
	}
}

// Build wires the evolver: the table changes are counted in the
// connector's TableChanges (doris_sink_table_changes_total).
func TestBuildCountsTableChanges(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	v1 := [][2]string{{"id", "int64"}}
	v2 := [][2]string{{"id", "int64"}, {"n", "int32"}}
	key := []byte(`{"schema":{"type":"struct","fields":[{"type":"int64","field":"id"}]},"payload":{"id":1}}`)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Key: key, Value: dbzValue(v1, `{"id":1}`)},
		&kgo.Record{Key: key, Value: dbzValue(v2, `{"id":1,"n":2}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	path := e.dir + "/job.yaml"
	yaml := fmt.Sprintf("job: { name: b, data_dir: %s/data }\nkafka: { brokers: [%s], topic: orders }\n"+
		"doris: { fe: [%s], mysql: %s, user: root, database: demo, table: made, create_table: true, create_table_replication: 1 }\n"+
		"records: { format: debezium, schema_evolution: add_columns }\nmetrics: { listen: \"\" }\n",
		e.dir, strings.Join(e.kc.ListenAddrs(), ", "), e.srv.FEURL(), e.srv.MySQLAddr())
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{File: path, Need: config.NeedRun})
	if err != nil {
		t.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{e.srv.FEURL()}, MySQL: e.srv.MySQLAddr(), User: "root", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var job *Job
	job, err = Build(cfg, Deps{Doris: client, ConnectorOpts: []kafka.Opt{kafka.WithTestingKnobs(&kafka.TestingKnobs{
		AfterPoll: func(p kafka.Position) {
			if p.Offsets[0] >= 2 {
				job.Connector.Drain()
			}
		}})}})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Connector.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := job.Connector.Metrics().TableChanges.Load(); got != 2 {
		t.Fatalf("TableChanges = %d, want 2 (created, one ALTER)", got)
	}
}

// run with routing.debezium_template, doris.create_table and
// records.schema_evolution (refused before per-table evolution): each
// source table of one topic gets its own created table, one of them a new
// column; the ledger names each table's change.
func TestRunCreatesAndEvolvesRoutedTables(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	e.table = "unused"
	e.env = []string{"DORIS_SINK_DORIS__CREATE_TABLE=true", "DORIS_SINK_DORIS__CREATE_TABLE_BUCKETS=1",
		"DORIS_SINK_DORIS__CREATE_TABLE_REPLICATION=1", "DORIS_SINK_ROUTING__DEBEZIUM_TEMPLATE={db}_{table}"}
	v1 := [][2]string{{"id", "int64"}, {"name", "string"}}
	v2 := append(append([][2]string(nil), v1...), [2]string{"age", "int32"})
	key := func(id int) []byte {
		return fmt.Appendf(nil, `{"schema":{"type":"struct","fields":[{"type":"int64","field":"id"}]},"payload":{"id":%d}}`, id)
	}
	from := func(table string, v []byte) []byte {
		return []byte(strings.Replace(string(v), `"op":"c"`, `"op":"c","source":{"db":"shop","table":"`+table+`"}`, 1))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rs := []*kgo.Record{
		{Key: key(1), Value: from("a", dbzValue(v1, `{"id":1,"name":"a1"}`))},
		{Key: key(1), Value: from("b", dbzValue(v1, `{"id":1,"name":"b1"}`))},
		{Key: key(2), Value: from("b", dbzValue(v2, `{"id":2,"name":"b2","age":30}`))},
		{Key: key(2), Value: from("a", dbzValue(v1, `{"id":2,"name":"a2"}`))},
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	sigs, tap, done := e.start("records: { format: debezium, schema_evolution: add_columns }\ndelivery: { checkpoint_max_rows: 2 }\n")
	tap.waitFor(t, "the checkpoint ending after record 4", func(m map[string]any) bool {
		return m["msg"] == "checkpoint decided" && strings.Contains(fmt.Sprint(m["end"]), "4")
	})
	sigs <- syscall.SIGTERM
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for table, want := range map[string]string{"shop_a": "[[1 a1] [2 a2]]", "shop_b": "[[1 b1 <nil>] [2 b2 30]]"} {
		rows, err := e.srv.Rows("demo", table)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows); got != want {
			t.Errorf("%s rows %s, want %s", table, got, want)
		}
	}
	entries, _, err := ledger.ReadFile(e.dir + "/data")
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, en := range entries {
		if en.Event == ledger.EventTableCreated || en.Event == ledger.EventSchemaChanged {
			changes = append(changes, en.Event+" "+en.DB+"."+en.Table)
		}
	}
	if got := strings.Join(changes, ","); got != "table_created demo.shop_a,table_created demo.shop_b,schema_changed demo.shop_b" {
		t.Fatalf("ledger table changes %s", got)
	}
}
