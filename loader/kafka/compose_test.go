package kafka

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// Issue 28: Converter.forTable copied neither the decoder nor the envelope,
// so a registry format with routing and schema evolution panicked at the
// first record. Every setting of NewConverter now lives in convSettings,
// which forTable copies whole. This test fails when a field is added to
// Converter without saying whether it is a setting (in convSettings) or
// one converter's own state (listed here), and when forTable loses a
// setting.
func TestForTableCopiesEverySetting(t *testing.T) {
	t.Parallel()
	// One converter's own state: a routed table's converter starts it
	// afresh (schemas and watch are re-made by forTable itself).
	own := map[string]bool{"buf": true, "topicCache": true, "topicVal": true, "watch": true, "schemas": true,
		"vals": true, "vbuf": true, "scratch": true}
	ct := reflect.TypeFor[Converter]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		if f.Name != "convSettings" && !own[f.Name] {
			t.Errorf("Converter.%s is neither in convSettings (shared by every routed table's converter) nor a listed per-converter state: classify it", f.Name)
		}
	}
	// Every ConvertConfig field set, so every setting is non-zero.
	cfg := ConvertConfig{Format: FormatAvro, Schemas: fakeSchemas{}, Envelope: EnvelopeDebezium,
		Metadata: MetadataColumns{Topic: "t", Partition: "p", Offset: "o", Timestamp: "ts", TimestampFormat: TimestampDatetime}}
	base, err := NewConverter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base.del = DeleteConfig{Field: "x", Value: "1"} // not valid with avro: only to see that forTable replaces it
	sv := reflect.ValueOf(base.convSettings)
	for i := range sv.NumField() {
		if sv.Field(i).IsZero() {
			t.Errorf("convSettings.%s is zero for a converter of %+v: set it in this test", sv.Type().Field(i).Name, cfg)
		}
	}
	del := DeleteConfig{Tombstones: true}
	n := base.forTable(&atomic.Int64{}, del)
	want := base.convSettings
	want.del = del
	if !reflect.DeepEqual(n.convSettings, want) {
		t.Fatalf("forTable settings %+v, want %+v", n.convSettings, want)
	}
}

// shopAvro is an Avro Debezium envelope of a source table of database
// shop, value fields given as Avro field JSON.
func shopAvro(table string, fields string) string {
	return `{"type":"record","name":"Envelope","namespace":"srv.shop.` + table + `","fields":[
	{"name":"before","type":["null",{"type":"record","name":"Value","fields":[` + fields + `]}],"default":null},
	{"name":"after","type":["null","Value"],"default":null},
	{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.mysql","fields":[{"name":"db","type":"string"},{"name":"table","type":["null","string"],"default":null}]}},
	{"name":"op","type":"string"}]}`
}

// serdeAs registers schema under subject and returns its wire-format
// encoder.
func (a *avroEnv) serdeAs(subject, schema string) func(v any) []byte {
	a.t.Helper()
	ss, err := a.sr.CreateSchema(context.Background(), subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		a.t.Fatal(err)
	}
	as, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		a.t.Fatal(err)
	}
	// An API of its own: hamba/avro's default one caches encoders in a way
	// that mixes up two versions of one record name.
	api := avro.Config{}.Freeze()
	var s sr.Serde
	s.Register(ss.ID, map[string]any{}, sr.EncodeFn(func(v any) ([]byte, error) { return api.Marshal(as, v) }))
	return func(v any) []byte {
		b, err := s.Encode(v)
		if err != nil {
			a.t.Fatal(err)
		}
		return b
	}
}

// Issue 28: Avro Debezium events of two source tables, routed by
// routing.debezium_template (read from the decoded event's source block:
// it read the raw value as JSON and routed nothing) with each table
// evolved (add_columns: it panicked, the table's converter had no
// decoder): creates, updates, deletes and tombstones land per table, and
// customers' v2 schema adds the nullable email column with its values.
func TestAvroDebeziumRoutedAndEvolved(t *testing.T) {
	t.Parallel()
	const unique = ` UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
	a := newAvroEnv(t, "CREATE TABLE shop_customers (id BIGINT, name VARCHAR(32))"+unique)
	if err := a.srv.CreateTable(testDB, "CREATE TABLE shop_orders (id BIGINT, amount BIGINT)"+unique); err != nil {
		t.Fatal(err)
	}
	a.props = EnvelopeProperties(EnvelopeDebezium)
	cust := a.serdeAs("c1", shopAvro("customers", `{"name":"id","type":"long"},{"name":"name","type":"string"}`))
	cust2 := a.serdeAs("c2", shopAvro("customers", `{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null}`))
	ord := a.serdeAs("o1", shopAvro("orders", `{"name":"id","type":"long"},{"name":"amount","type":"long"}`))
	ev := func(enc func(any) []byte, table, op string, img map[string]any) *kgo.Record {
		v := map[string]any{"op": op, "source": map[string]any{"db": "shop", "table": map[string]any{"string": table}},
			"before": nil, "after": nil}
		u := map[string]any{"srv.shop." + table + ".Value": img}
		if op == "d" {
			v["before"] = u
		} else {
			v["after"] = u
		}
		return &kgo.Record{Key: fmt.Appendf(nil, `{"id":%v}`, img["id"]), Value: enc(v)}
	}
	a.produce(
		ev(cust, "customers", "c", map[string]any{"id": int64(1), "name": "ann"}),
		ev(ord, "orders", "c", map[string]any{"id": int64(10), "amount": int64(5)}),
		ev(cust, "customers", "c", map[string]any{"id": int64(2), "name": "bob"}),
		ev(ord, "orders", "c", map[string]any{"id": int64(11), "amount": int64(6)}),
		ev(cust2, "customers", "u", map[string]any{"id": int64(1), "name": "ann", "email": map[string]any{"string": "a@x"}}),
		ev(cust2, "customers", "d", map[string]any{"id": int64(2), "name": "bob", "email": nil}),
		&kgo.Record{Key: []byte(`{"id":2}`)}, // the delete's tombstone
		ev(ord, "orders", "u", map[string]any{"id": int64(10), "amount": int64(7)}),
		ev(ord, "orders", "d", map[string]any{"id": int64(11), "amount": int64(6)}),
		&kgo.Record{Key: []byte(`{"id":11}`)},
		ev(cust2, "customers", "c", map[string]any{"id": int64(3), "name": "cy", "email": map[string]any{"string": "c@x"}}),
	)
	cfg := a.config()
	cfg.Envelope, cfg.Schemas, cfg.CheckpointMaxRows = EnvelopeDebezium, a.schemas(nil), 3
	cfg.Routing = Routing{DebeziumTemplate: "{db}_{table}"}
	ld := a.loader(nil)
	c, err := New(cfg, ld, WithRecoverBackoff(0, 0), WithTableEvolvers(func(table string) SchemaEvolver {
		return &TableEvolver{DDL: a.client, DB: testDB, Table: table, AddColumns: true, Evidence: func(kind, ddl string) {
			ld.RecordTableChangeOf(table, kind, ddl)
		}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := a.rowsOf("shop_customers"), "[[1 ann a@x] [3 cy c@x]]"; got != want {
		t.Errorf("shop_customers %s, want %s", got, want)
	}
	if got, want := a.rowsOf("shop_orders"), "[[10 7]]"; got != want {
		t.Errorf("shop_orders %s, want %s", got, want)
	}
	if got := c.Metrics().Tombstones.Load(); got != 2 {
		t.Errorf("Tombstones = %d, want 2", got)
	}
	if got := fmt.Sprint(a.tableChanges()); got != "[schema_changed db.shop_customers: ALTER TABLE `db`.`shop_customers` ADD COLUMN `email` string NULL]" {
		t.Errorf("table changes %s", got)
	}
	a.checkNoRunningTxn()
}

// Issue 28: routing.table_field reads the decoded row of a registry
// format (it parsed the Avro bytes as JSON and routed nothing); the value
// is decoded once per record, routing and conversion included.
func TestAvroRoutedByTableField(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, "")
	a.createRoutedTables()
	enc := a.serde(`{"type":"record","name":"R","fields":[{"name":"id","type":"long"},{"name":"v","type":"string"},{"name":"kind","type":"string"}]}`)
	var recs []*kgo.Record
	for i := range 9 {
		recs = append(recs, &kgo.Record{Value: enc(map[string]any{"id": int64(i), "v": fmt.Sprint("v", i), "kind": routedTables[i%3]})})
	}
	a.produce(recs...)
	cfg := a.config()
	schemas := &countingDecoder{SchemaDecoder: a.schemas(nil)}
	cfg.Schemas = schemas
	cfg.Routing = Routing{TableField: "kind"}
	c := a.connector(cfg, nil)
	if err := a.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	a.checkRouted(9)
	if n := schemas.n.Load(); n != 9 {
		t.Errorf("%d decodes for 9 records, want 9", n)
	}
}

// countingDecoder counts AppendJSON calls.
type countingDecoder struct {
	SchemaDecoder
	n atomic.Int64
}

func (d *countingDecoder) AppendJSON(ctx context.Context, dst, value []byte) ([]byte, error) {
	d.n.Add(1)
	return d.SchemaDecoder.AppendJSON(ctx, dst, value)
}

// SkipsTombstones, which verify accounts offsets by, says what the
// converter of each format and envelope does with a tombstone.
func TestSkipsTombstonesIsWhatConvertDoes(t *testing.T) {
	t.Parallel()
	for _, format := range []string{FormatJSON, FormatCSV, FormatDebezium, FormatAvro, FormatProtobuf, FormatJSONSchema} {
		for _, envelope := range []string{EnvelopeNone, EnvelopeDebezium} {
			c, err := NewConverter(ConvertConfig{Format: format, Envelope: envelope, Schemas: fakeSchemas{}})
			if err != nil {
				continue // a combination NewConverter refuses
			}
			_, err = c.Convert(&kgo.Record{Key: []byte(`{"id":1}`)})
			if got := errors.Is(err, ErrTombstone); got != SkipsTombstones(format, envelope) {
				t.Errorf("%s/%q: Convert(tombstone) = %v, SkipsTombstones %v", format, envelope, err, SkipsTombstones(format, envelope))
			}
		}
	}
}
