package run

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

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
