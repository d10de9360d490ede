package run

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// run loads records.format avro end to end: the config's registry URL and
// time zone reach the decoder (a timestamp-micros lands in +02:00).
func TestRunLoadsAvro(t *testing.T) {
	t.Parallel()
	e := newRunEnv(t)
	if err := e.srv.CreateTable("demo", "CREATE TABLE ev (id BIGINT, at DATETIME(6)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	e.table = "ev"
	reg, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	schema := `{"type":"record","name":"Ev","fields":[{"name":"id","type":"long"},{"name":"at","type":{"type":"long","logicalType":"timestamp-micros"}}]}`
	id, err := reg.Registry().Register("orders-value", sr.Schema{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	as := avro.MustParse(schema)
	var serde sr.Serde
	serde.Register(id, map[string]any{}, sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(as, v) }))
	value := serde.MustEncode(map[string]any{"id": int64(1), "at": time.Date(2026, 12, 1, 10, 0, 0, 5000, time.UTC)})
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	sigs, tap, done := e.start(fmt.Sprintf("records: { format: avro, time_zone: \"+02:00\", schema_registry: { urls: [%s] } }\ndelivery: { checkpoint_max_rows: 1 }\n", reg.URL()))
	tap.wait(t, "checkpoint decided")
	sigs <- syscall.SIGTERM
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := e.srv.Rows("demo", "ev")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows), "[[1 2026-12-01 12:00:00.000005]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
}

// The registry keys reach the connector, and a Debezium envelope makes
// the job load the delete sign.
func TestConnectorConfigCarriesRegistry(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Records: config.Records{Format: config.RecordsAvro, Envelope: config.EnvelopeDebezium,
		SchemaRegistry: config.SchemaRegistry{URLs: []string{"http://127.0.0.1:1"}}}}
	kc, err := connectorConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if kc.Schemas == nil || kc.Envelope != "debezium" {
		t.Fatalf("Schemas %v, Envelope %q", kc.Schemas, kc.Envelope)
	}
	if deleteSource(cfg) != "records.envelope debezium" {
		t.Fatalf("deleteSource %q", deleteSource(cfg))
	}
}
