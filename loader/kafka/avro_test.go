package kafka

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/registry"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// avroEnv is an env whose topic carries Avro through an in-process Schema
// Registry.
type avroEnv struct {
	*env
	reg *srtest.Server
	sr  *sr.Client
}

// newAvroEnv creates the table of ddl ("" keeps only the orders table).
func newAvroEnv(t *testing.T, ddl string) *avroEnv {
	t.Helper()
	e := newEnv(t, 1)
	if ddl != "" {
		if err := e.srv.CreateTable(testDB, ddl); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	cl, err := sr.NewClient(sr.URLs(reg.URL()))
	if err != nil {
		t.Fatal(err)
	}
	e.format = FormatAvro
	return &avroEnv{env: e, reg: reg, sr: cl}
}

// schemas returns the registry client the connector decodes with; it
// never sleeps between retries.
func (a *avroEnv) schemas(loc *time.Location) *registry.Client {
	a.t.Helper()
	c, err := registry.New(registry.Config{URLs: []string{a.reg.URL()}, SchemaType: sr.TypeAvro, TimeZone: loc,
		Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// serde registers schema under the topic's value subject and returns an
// encoder of values in the wire format (pkg/sr Serde, as a Go producer
// writes them).
func (a *avroEnv) serde(schema string) func(v any) []byte {
	a.t.Helper()
	ss, err := a.sr.CreateSchema(context.Background(), testTopic+"-value", sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		a.t.Fatal(err)
	}
	as, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		a.t.Fatal(err)
	}
	var s sr.Serde
	s.Register(ss.ID, map[string]any{}, sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(as, v) }))
	return func(v any) []byte {
		b, err := s.Encode(v)
		if err != nil {
			a.t.Fatal(err)
		}
		return b
	}
}

const typesSchema = `{"type":"record","name":"Row","namespace":"t","fields":[
	{"name":"id","type":"long"},
	{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":20,"scale":2}},
	{"name":"day","type":{"type":"int","logicalType":"date"}},
	{"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
	{"name":"ts_ms","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"lts","type":{"type":"long","logicalType":"local-timestamp-micros"}},
	{"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
	{"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
	{"name":"u","type":{"type":"string","logicalType":"uuid"}},
	{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
	{"name":"flag","type":"boolean"},
	{"name":"price","type":"double"},
	{"name":"note","type":["null","string"]},
	{"name":"nested","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"},{"name":"tags","type":{"type":"array","items":"string"}}]}},
	{"name":"attrs","type":{"type":"map","values":"long"}}]}`

const typesDDL = "CREATE TABLE avro_types (id BIGINT, amount DECIMAL(12,2), day DATE, ts DATETIME(6), ts_ms DATETIME(3), " +
	"lts DATETIME(6), tm VARCHAR(16), tu VARCHAR(16), u VARCHAR(36), status VARCHAR(8), flag BOOLEAN, price DOUBLE, " +
	"note VARCHAR(64), nested JSON, attrs JSON) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"

// TestAvroLogicalTypesLoaded produces Avro records with pkg/sr serde
// through the in-process registry, loads them exactly once, and checks
// every logical type against the value the emulator stored, with
// records.time_zone +08:00 for the instants.
func TestAvroLogicalTypesLoaded(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, typesDDL)
	a.table = "avro_types"
	enc := a.serde(typesSchema)
	ts := time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC)
	row := func(id int64, amount string) map[string]any {
		r, _ := new(big.Rat).SetString(amount)
		return map[string]any{"id": id, "amount": r, "day": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "ts": ts, "ts_ms": ts,
			"lts": ts, "tm": 13*time.Hour + 5*time.Minute + 7*time.Second + 89*time.Millisecond,
			"tu": 1*time.Hour + 2*time.Second + 3*time.Microsecond, "u": "123e4567-e89b-12d3-a456-426614174000",
			"status": "PAID", "flag": true, "price": 19.5, "note": nil,
			"nested": map[string]any{"x": int32(3), "tags": []string{"a", "b"}}, "attrs": map[string]any{"k": int64(1)}}
	}
	// Row 2's amount has 13 integer digits: more than DECIMAL(12,2) holds.
	a.produce(&kgo.Record{Value: enc(row(1, "-1234567890.05"))}, &kgo.Record{Value: enc(row(2, "1234567890123.00"))})
	cfg := a.config()
	cfg.Schemas = a.schemas(time.FixedZone("UTC+8", 8*3600))
	if err := a.runToEnd(ctxFor(t), a.connector(cfg, nil)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	a.checkExactlyOnce(3, 0)
	rows, err := a.srv.Rows(testDB, "avro_types")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	first := rows[0]
	if first[0].(int64) != 1 {
		first = rows[1]
	}
	got := map[string]string{}
	for i, col := range []string{"id", "amount", "day", "ts", "ts_ms", "lts", "tm", "tu", "u", "status", "flag", "price", "note", "nested", "attrs"} {
		got[col] = fmt.Sprint(first[i])
	}
	for _, tc := range []struct{ logical, col, want string }{
		{"decimal", "amount", "-1234567890.05"},
		{"date", "day", "2024-02-29"},
		{"timestamp-micros in records.time_zone", "ts", "2024-03-01 07:59:58.123456"},
		{"timestamp-millis in records.time_zone", "ts_ms", "2024-03-01 07:59:58.123"},
		{"local-timestamp-micros as written", "lts", "2024-02-29 23:59:58.123456"},
		{"time-millis", "tm", "13:05:07.089"},
		{"time-micros", "tu", "01:00:02.000003"},
		{"uuid", "u", "123e4567-e89b-12d3-a456-426614174000"},
		{"enum", "status", "PAID"},
		{"boolean", "flag", "1"},
		{"double", "price", "19.5"},
		{"nullable union", "note", "<nil>"},
		{"nested record and array", "nested", `{"x":3,"tags":["a","b"]}`},
		{"map", "attrs", `{"k":1}`},
	} {
		t.Run(tc.logical, func(t *testing.T) {
			if got[tc.col] != tc.want {
				t.Errorf("column %s = %q, want %q", tc.col, got[tc.col], tc.want)
			}
		})
	}
	// A decimal wider than its column: Doris (non-strict, the default)
	// loads NULL, as the emulator does (docs/configuration.md).
	t.Run("decimal overflowing the column", func(t *testing.T) {
		for _, r := range rows {
			if r[0].(int64) == 2 && r[1] != nil {
				t.Errorf("amount of row 2 = %v, want NULL", r[1])
			}
		}
	})
}

// TestAvroSchemaEvolution: v1 and v2 records of one subject in one topic;
// each decodes with its writer schema, so the v1 row has no email (NULL)
// and the v2 row has it.
func TestAvroSchemaEvolution(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, "CREATE TABLE users (id BIGINT, name VARCHAR(16), email VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	a.table = "users"
	v1 := a.serde(`{"type":"record","name":"U","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`)
	v2 := a.serde(`{"type":"record","name":"U","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":"string","default":""}]}`)
	a.produce(&kgo.Record{Value: v1(map[string]any{"id": int64(0), "name": "a"})},
		&kgo.Record{Value: v2(map[string]any{"id": int64(1), "name": "b", "email": "b@x"})})
	cfg := a.config()
	cfg.Schemas = a.schemas(nil)
	if err := a.runToEnd(ctxFor(t), a.connector(cfg, nil)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := a.srv.Rows(testDB, "users")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows), "[[0 a <nil>] [1 b b@x]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
}

// TestAvroRegistryOutageRefusesNotDeadLetters: with a dead-letter topic
// configured, a record whose schema the registry cannot give (down beyond
// the retry bound) stops the run at its offset; nothing is dead-lettered.
// An undecodable record is dead-lettered.
func TestAvroRegistryOutageRefusesNotDeadLetters(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, "") // the orders table
	ctx := ctxFor(t)
	if _, err := a.adm.CreateTopic(ctx, 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	enc := a.serde(`{"type":"record","name":"O","fields":[{"name":"id","type":"long"},{"name":"v","type":"string"}]}`)
	good := enc(map[string]any{"id": int64(0), "v": "v0"})
	a.produce(&kgo.Record{Value: good}, &kgo.Record{Value: good[:len(good)-1]}, // cut: undecodable
		&kgo.Record{Value: []byte(`{"id":2}`)}) // not the wire format
	cfg := a.config()
	cfg.DeadLetterTopic = "orders-dlq"
	cfg.DeadLetterAtLeastOnce = true // no coordinator store here: dead letters are produced as read
	cfg.Schemas = a.schemas(nil)
	c := a.connector(cfg, nil)
	if err := a.runToEnd(ctx, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	a.checkExactlyOnce(1)
	if got := c.Metrics().DeadLettered.Load(); got != 2 {
		t.Fatalf("DeadLettered = %d, want 2 (the cut payload and the plain JSON)", got)
	}

	// A new schema id while the registry is down: refused, not dead-lettered.
	enc2 := a.serde(`{"type":"record","name":"O","fields":[{"name":"id","type":"long"},{"name":"v","type":"string"},{"name":"w","type":"int","default":0}]}`)
	a.produce(&kgo.Record{Value: enc2(map[string]any{"id": int64(3), "v": "v3", "w": int32(1)})})
	a.reg.Registry().SetDown(true)
	cfg.Schemas = a.schemas(nil) // a new process: nothing cached
	c = a.connector(cfg, nil)
	err := a.runToEnd(ctx, c)
	var re *RecordError
	if !errors.As(err, &re) || re.Offset != 3 || !errors.Is(err, registry.ErrUnavailable) {
		t.Fatalf("Run: %v, want a RecordError at orders/0@3 matching registry.ErrUnavailable", err)
	}
	if got := c.Metrics().DeadLettered.Load(); got != 0 {
		t.Fatalf("DeadLettered = %d during the outage, want 0", got)
	}
	// Back up: the next process loads it.
	a.reg.Registry().SetDown(false)
	if err := a.runToEnd(ctx, a.connector(cfg, nil)); err != nil {
		t.Fatalf("Run after the outage: %v", err)
	}
	a.checkExactlyOnce(4, 1, 2)
}

const debeziumAvroSchema = `{"type":"record","name":"Envelope","namespace":"dbserver1.inventory.users","fields":[
	{"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},
		{"name":"updated","type":{"type":"long","connect.version":1,"connect.name":"io.debezium.time.Timestamp"}}]}],"default":null},
	{"name":"after","type":["null","Value"],"default":null},
	{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.mysql","fields":[{"name":"db","type":"string"},{"name":"table","type":["null","string"],"default":null}]}},
	{"name":"op","type":"string"},
	{"name":"ts_ms","type":["null","long"],"default":null}]}`

// TestDebeziumAvroEnvelope: Debezium change events in Avro
// (records.format avro, records.envelope debezium) load through the
// Debezium path: c/u/r upsert the after image, d deletes the before
// image, tombstones are skipped and counted; a DATETIME column as
// Debezium's io.debezium.time.Timestamp (epoch ms, no zone) lands as its
// wall clock.
func TestDebeziumAvroEnvelope(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, "CREATE TABLE users (id BIGINT, name VARCHAR(32), updated DATETIME(3)) UNIQUE KEY(id) "+
		`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`)
	a.table, a.props = "users", EnvelopeProperties(EnvelopeDebezium)
	enc := a.serde(debeziumAvroSchema)
	src := map[string]any{"db": "inventory", "table": map[string]any{"string": "users"}}
	img := func(id int64, name string) map[string]any {
		updated := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(id) * 1500 * time.Millisecond)
		return map[string]any{"dbserver1.inventory.users.Value": map[string]any{"id": id, "name": name, "updated": updated.UnixMilli()}}
	}
	ev := func(op string, before, after map[string]any) *kgo.Record {
		v := map[string]any{"op": op, "source": src, "ts_ms": map[string]any{"long": int64(1)}, "before": nil, "after": nil}
		if before != nil {
			v["before"] = before
		}
		if after != nil {
			v["after"] = after
		}
		return &kgo.Record{Value: enc(v)}
	}
	a.produce(ev("c", nil, img(1, "a")), ev("c", nil, img(2, "b")), ev("u", img(1, "a"), img(1, "a2")),
		ev("d", img(2, "b"), nil), &kgo.Record{Key: []byte("k"), Value: nil}, ev("r", nil, img(4, "d")))
	cfg := a.config()
	cfg.Envelope = EnvelopeDebezium
	cfg.Schemas = a.schemas(nil)
	cfg.CheckpointMaxRows = 2
	c := a.connector(cfg, nil)
	if err := a.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := a.srv.Rows(testDB, "users")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows), "[[1 a2 2026-12-01 10:00:01.500] [4 d 2026-12-01 10:00:06.000]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if got := c.Metrics().Tombstones.Load(); got != 1 {
		t.Fatalf("Tombstones = %d, want 1", got)
	}
}

func TestRegistryFormatConfig(t *testing.T) {
	t.Parallel()
	if _, err := NewConverter(ConvertConfig{Format: FormatAvro}); err == nil {
		t.Fatal("avro without a registry was accepted")
	}
	if _, err := NewConverter(ConvertConfig{Format: FormatJSON, Envelope: EnvelopeDebezium}); err == nil {
		t.Fatal("records.envelope debezium with json was accepted")
	}
	if _, err := NewConverter(ConvertConfig{Format: FormatAvro, Schemas: fakeSchemas{}, Delete: DeleteConfig{Tombstones: true}}); err == nil {
		t.Fatal("records.delete.* with avro was accepted")
	}
}

// fakeSchemas decodes every value to {"id":1}.
type fakeSchemas struct{}

func (fakeSchemas) AppendJSON(_ context.Context, dst, _ []byte) ([]byte, error) {
	return append(dst, `{"id":1}`...), nil
}

// TestRegistryConvertZeroAlloc: the registry path writes the row in place
// (metadata columns included) without allocating.
func TestRegistryConvertZeroAlloc(t *testing.T) {
	c, err := NewConverter(ConvertConfig{Format: FormatAvro, Schemas: fakeSchemas{}, Metadata: MetadataColumns{Offset: "off"}})
	if err != nil {
		t.Fatal(err)
	}
	r := &kgo.Record{Value: []byte{0, 0, 0, 0, 1}, Offset: 5}
	row, err := c.Convert(r)
	if err != nil || string(row) != `{"id":1,"off":5}` {
		t.Fatalf("row %s, %v", row, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Convert(r) }); n != 0 {
		t.Fatalf("%v allocs per record, want 0", n)
	}
}
