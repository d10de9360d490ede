package kafka

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/doris-sink/doris-sink/loader/kafka/protorow"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// registrySchemas is the registry client the connector decodes typ with;
// it never sleeps between retries.
func (a *avroEnv) registrySchemas(typ sr.SchemaType, loc *time.Location) *registry.Client {
	a.t.Helper()
	c, err := registry.New(registry.Config{URLs: []string{a.reg.URL()}, SchemaType: typ, TimeZone: loc,
		Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// protoSerde registers schema (Protobuf) under the topic's value subject
// and returns an encoder of messages of the top-level message at index,
// given as protojson text, in the wire format (pkg/sr Serde with the
// Confluent message index, as a Go producer writes them).
func (a *avroEnv) protoSerde(schema string, index int) func(js string) []byte {
	a.t.Helper()
	ss, err := a.sr.CreateSchema(context.Background(), testTopic+"-value", sr.Schema{Schema: schema, Type: sr.TypeProtobuf})
	if err != nil {
		a.t.Fatal(err)
	}
	// The producer's descriptor is compiled by protorow itself, so the
	// known dependencies (confluent/type/decimal.proto, google/type/date.proto)
	// resolve as the registry's producers see them: without references.
	d, err := protorow.New(schema, nil, protorow.Options{})
	if err != nil {
		a.t.Fatal(err)
	}
	md := d.File().Messages().Get(index)
	var s sr.Serde
	s.Register(ss.ID, &dynamicpb.Message{}, sr.Index(index),
		sr.EncodeFn(func(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }))
	return func(js string) []byte {
		m := dynamicpb.NewMessage(md)
		if err := protojson.Unmarshal([]byte(js), m); err != nil {
			a.t.Fatalf("protojson %s: %v", js, err)
		}
		b, err := s.Encode(m)
		if err != nil {
			a.t.Fatal(err)
		}
		return b
	}
}

// decimalBytes is the base64 protojson text of a confluent.type.Decimal
// value: the unscaled integer, big-endian two's complement.
func decimalBytes(unscaled string) string {
	n, _ := new(big.Int).SetString(unscaled, 10)
	size := len(n.Bytes()) + 1
	if n.Sign() >= 0 {
		return base64.StdEncoding.EncodeToString(n.FillBytes(make([]byte, size)))
	}
	// Two's complement: 2^(8·size) + n.
	m := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*size)), n)
	return base64.StdEncoding.EncodeToString(m.FillBytes(make([]byte, size)))
}

// protoTypesSchema has Item first, so Row is message index [1].
const protoTypesSchema = `syntax = "proto3";
package shop;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "confluent/type/decimal.proto";
import "google/type/date.proto";

enum Status {
  STATUS_UNSPECIFIED = 0;
  PAID = 1;
}

message Item {
  string sku = 1;
  int32 qty = 2;
}

message Row {
  int64 id = 1;
  int32 i32 = 2;
  int64 big = 3;
  uint64 u64 = 4;
  sint64 s64 = 5;
  double price = 6;
  float ratio = 7;
  bool flag = 8;
  string name = 9;
  bytes raw = 10;
  Status status = 11;
  Item item = 12;
  repeated string tags = 13;
  map<string, int64> counts = 14;
  oneof pay {
    string card = 15;
    int64 points = 16;
  }
  google.protobuf.Int64Value w_i64 = 17;
  google.protobuf.StringValue w_str = 18;
  google.protobuf.Timestamp at = 19;
  confluent.type.Decimal amount = 20;
  google.type.Date day = 21;
  optional int32 opt = 22;
  repeated Item items = 23;
}
`

const protoTypesDDL = "CREATE TABLE proto_types (id BIGINT, i32 INT, big BIGINT, u64 LARGEINT, s64 BIGINT, price DOUBLE, " +
	"ratio FLOAT, flag BOOLEAN, name VARCHAR(16), raw VARCHAR(16), status VARCHAR(24), item JSON, tags JSON, counts JSON, " +
	"card VARCHAR(16), points BIGINT, w_i64 BIGINT, w_str VARCHAR(16), at DATETIME(6), amount DECIMAL(12,2), day DATE, " +
	"opt INT, items JSON) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"

var protoTypesCols = []string{"id", "i32", "big", "u64", "s64", "price", "ratio", "flag", "name", "raw", "status", "item",
	"tags", "counts", "card", "points", "w_i64", "w_str", "at", "amount", "day", "opt", "items"}

// TestProtobufTypesLoaded produces Protobuf records with pkg/sr serde
// (message index [1]) through the in-process registry, loads them exactly
// once, and checks each row of the Protobuf type table
// (docs/configuration.md) against the value the emulator stored, with
// records.time_zone +08:00 for google.protobuf.Timestamp.
func TestProtobufTypesLoaded(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, protoTypesDDL)
	a.table, a.format = "proto_types", FormatProtobuf
	enc := a.protoSerde(protoTypesSchema, 1)
	full := `{"id":"0","i32":-7,"big":"9007199254740993","u64":"18446744073709551615","s64":"-9223372036854775808",
		"price":19.5,"ratio":0.25,"flag":true,"name":"héllo","raw":"AAH/","status":"PAID",
		"item":{"sku":"a1","qty":2},"tags":["x","y"],"counts":{"k":"9007199254740993"},"card":"visa",
		"wI64":"-5","wStr":"","at":"2024-02-29T23:59:58.123456789Z",
		"amount":{"value":"` + decimalBytes("-123456789005") + `","precision":12,"scale":2},
		"day":{"year":2024,"month":2,"day":29},"opt":0,"items":[{"sku":"b"},{"qty":3}]}`
	// Row 1: nothing set but the oneof's points, a decimal wider than
	// DECIMAL(12,2) and a partial date.
	sparse := `{"id":"1","points":"42","amount":{"value":"` + decimalBytes("123456789012345") + `","scale":2},"day":{"year":2024}}`
	a.produce(&kgo.Record{Value: enc(full)}, &kgo.Record{Value: enc(sparse)})
	cfg := a.config()
	cfg.Schemas = a.registrySchemas(sr.TypeProtobuf, time.FixedZone("UTC+8", 8*3600))
	if err := a.runToEnd(ctxFor(t), a.connector(cfg, nil)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	a.checkExactlyOnce(2)
	got := storedByID(t, a.env, "proto_types", protoTypesCols)
	for _, tc := range []struct {
		row       int64
		what, col string
		want      string
	}{
		{0, "int32", "i32", "-7"},
		{0, "int64 beyond 2^53, exact", "big", "9007199254740993"},
		{0, "uint64 max into LARGEINT", "u64", "18446744073709551615"},
		{0, "sint64 min", "s64", "-9223372036854775808"},
		{0, "double", "price", "19.5"},
		{0, "float", "ratio", "0.25"},
		{0, "bool", "flag", "1"},
		{0, "string (UTF-8)", "name", "héllo"},
		{0, "bytes as base64", "raw", "AAH/"},
		{0, "enum by name", "status", "PAID"},
		{0, "nested message into JSON", "item", `{"sku":"a1","qty":2}`},
		{0, "repeated scalar into JSON", "tags", `["x","y"]`},
		{0, "map, int64 values exact", "counts", `{"k":9007199254740993}`},
		{0, "repeated message, zero fields written", "items", `[{"sku":"b","qty":0},{"sku":"","qty":3}]`},
		{0, "oneof member set", "card", "visa"},
		{0, "oneof member not set", "points", "<nil>"},
		{0, "Int64Value wrapper", "w_i64", "-5"},
		{0, "empty StringValue wrapper", "w_str", ""},
		{0, "Timestamp in records.time_zone, truncated to µs", "at", "2024-03-01 07:59:58.123456"},
		{0, "confluent.type.Decimal", "amount", "-1234567890.05"},
		{0, "google.type.Date", "day", "2024-02-29"},
		{0, "proto3 optional set to zero", "opt", "0"},
		{1, "proto3 zero values written", "i32", "0"},
		{1, "proto3 empty string written", "name", ""},
		{1, "enum zero value", "status", "STATUS_UNSPECIFIED"},
		{1, "absent message: NULL", "item", "<nil>"},
		{1, "empty repeated", "tags", "[]"},
		{1, "empty map", "counts", "{}"},
		{1, "other oneof member", "points", "42"},
		{1, "oneof member not set", "card", "<nil>"},
		{1, "absent wrapper: NULL", "w_i64", "<nil>"},
		{1, "absent Timestamp: NULL", "at", "<nil>"},
		{1, "decimal overflowing the column: NULL (non-strict load)", "amount", "<nil>"},
		{1, "partial google.type.Date: NULL", "day", "<nil>"},
		{1, "proto3 optional absent: NULL", "opt", "<nil>"},
	} {
		t.Run(fmt.Sprintf("row %d %s", tc.row, tc.what), func(t *testing.T) {
			if v := got[tc.row][tc.col]; v != tc.want {
				t.Errorf("row %d column %s = %q, want %q", tc.row, tc.col, v, tc.want)
			}
		})
	}
}

// storedByID reads table's rows keyed by their first column (an id) and
// renders each column with fmt.Sprint.
func storedByID(t *testing.T, e *env, table string, cols []string) map[int64]map[string]string {
	t.Helper()
	rows, err := e.srv.Rows(testDB, table)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]map[string]string{}
	for _, r := range rows {
		if len(r) != len(cols) {
			t.Fatalf("row %v has %d columns, want %d", r, len(r), len(cols))
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = fmt.Sprint(r[i])
		}
		out[r[0].(int64)] = m
	}
	return out
}

const debeziumProtoSchema = `syntax = "proto3";
package dbserver1.inventory.users;

message Value {
  int64 id = 1;
  string name = 2;
}

message Source {
  string db = 1;
  optional string table = 2;
}

message Envelope {
  Value before = 1;
  Value after = 2;
  Source source = 3;
  string op = 4;
  optional int64 ts_ms = 5;
}
`

// TestDebeziumProtobufEnvelope: Debezium change events in Protobuf
// (records.format protobuf, records.envelope debezium; Envelope is message
// index [2]) load through the Debezium path: an absent before/after image
// is a message field with presence, omitted rather than null; c/u/r upsert
// the after image, d deletes the before image, a tombstone is skipped.
func TestDebeziumProtobufEnvelope(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, "CREATE TABLE users (id BIGINT, name VARCHAR(32)) UNIQUE KEY(id) "+
		`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`)
	a.table, a.format, a.props = "users", FormatProtobuf, EnvelopeProperties(EnvelopeDebezium)
	enc := a.protoSerde(debeziumProtoSchema, 2)
	img := func(id int, name string) string { return fmt.Sprintf(`{"id":"%d","name":%q}`, id, name) }
	ev := func(op, before, after string) *kgo.Record {
		js := `{"op":"` + op + `","source":{"db":"inventory","table":"users"},"tsMs":"1"`
		if before != "" {
			js += `,"before":` + before
		}
		if after != "" {
			js += `,"after":` + after
		}
		return &kgo.Record{Value: enc(js + "}")}
	}
	a.produce(ev("c", "", img(1, "a")), ev("c", "", img(2, "b")), ev("u", img(1, "a"), img(1, "a2")),
		ev("d", img(2, "b"), ""), &kgo.Record{Key: []byte("k"), Value: nil}, ev("r", "", img(4, "d")))
	cfg := a.config()
	cfg.Envelope = EnvelopeDebezium
	cfg.Schemas = a.registrySchemas(sr.TypeProtobuf, nil)
	cfg.CheckpointMaxRows = 2
	c := a.connector(cfg, nil)
	if err := a.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := a.srv.Rows(testDB, "users")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows), "[[1 a2] [4 d]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if got := c.Metrics().Tombstones.Load(); got != 1 {
		t.Fatalf("Tombstones = %d, want 1", got)
	}
}

// TestProtobufUnknownSchemaIDRefused: a Protobuf record whose schema id
// the registry does not know yet (404 on every try: a registration not yet
// visible) stops the run at its offset with registry.ErrUnavailable and is
// not dead-lettered, though a dead-letter topic is configured; once the id
// is registered, the next process loads it.
func TestProtobufUnknownSchemaIDRefused(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, "") // the orders table
	a.format = FormatProtobuf
	ctx := ctxFor(t)
	if _, err := a.adm.CreateTopic(ctx, 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	enc := a.protoSerde(`syntax = "proto3"; message O { int64 id = 1; string v = 2; }`, 0)
	good := enc(`{"id":"0","v":"v0"}`)
	// The same payload under the id the registry gives next.
	late := enc(`{"id":"1","v":"v1"}`)
	lateID := binary.BigEndian.Uint32(late[1:registry.HeaderSize]) + 1
	binary.BigEndian.PutUint32(late[1:registry.HeaderSize], lateID)
	a.produce(&kgo.Record{Value: good}, &kgo.Record{Value: late})
	cfg := a.config()
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
	cfg.Schemas = a.registrySchemas(sr.TypeProtobuf, nil)
	c := a.connector(cfg, nil)
	err := a.runToEnd(ctx, c)
	var re *RecordError
	var fe *registry.FetchError
	if !errors.As(err, &re) || re.Offset != 1 || !errors.Is(err, registry.ErrUnavailable) || !errors.As(err, &fe) || fe.ID != int(lateID) {
		t.Fatalf("Run: %v, want a RecordError at orders/0@1 matching registry.ErrUnavailable for schema id %d", err, lateID)
	}
	var rse *sr.ResponseError
	if !errors.As(err, &rse) || rse.StatusCode != 404 {
		t.Fatalf("Run: %v, want the registry's 404 as the last failure", err)
	}
	if got := c.Metrics().DeadLettered.Load(); got != 0 {
		t.Fatalf("DeadLettered = %d, want 0", got)
	}
	// The registration becomes visible (another subject, so no
	// compatibility check): the next process loads both records once.
	ss, err := a.sr.CreateSchema(ctx, "late-value", sr.Schema{Type: sr.TypeProtobuf,
		Schema: `syntax = "proto3"; message O { int64 id = 1; string v = 2; int32 w = 3; }`})
	if err != nil || ss.ID != int(lateID) {
		t.Fatalf("registered id %d, %v; want id %d", ss.ID, err, lateID)
	}
	c = a.connector(cfg, nil)
	if err := a.runToEnd(ctx, c); err != nil {
		t.Fatalf("Run after the registration: %v", err)
	}
	if got := c.Metrics().DeadLettered.Load(); got != 0 {
		t.Fatalf("DeadLettered = %d, want 0", got)
	}
	a.checkExactlyOnce(2)
}

const protoWKTSchema = `syntax = "proto3";
package wkt;

import "google/protobuf/duration.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/wrappers.proto";
import "google/type/timeofday.proto";

message Inner { int32 x = 1; }

message Row {
  int64 id = 1;
  uint32 u32 = 2;
  fixed32 f32 = 3;
  sfixed64 sf64 = 4;
  google.protobuf.Duration took = 5;
  google.protobuf.Struct attrs = 6;
  google.protobuf.Value any_value = 7;
  google.protobuf.ListValue list = 8;
  google.protobuf.Any extra = 9;
  google.protobuf.Empty nothing = 10;
  google.type.TimeOfDay at = 11;
  map<int32, Inner> by_id = 12;
  map<bool, string> flags = 13;
  google.protobuf.BoolValue w_bool = 14;
  google.protobuf.DoubleValue w_dbl = 15;
  double nan = 16;
  repeated Inner inners = 17;
}
`

// TestProtobufWellKnownTypesLoaded: the rest of the Protobuf type table
// through the registry, the connector and the emulator: unsigned and fixed
// integers, Duration as seconds, Struct/Value/ListValue as the JSON they
// hold, Any and Empty as objects, TimeOfDay as text, maps with integer and
// bool keys (keys become strings), the bool and double wrappers, and a
// NaN double, written as the string "NaN", which the emulator parses into
// the DOUBLE column as Doris does (data_type_number_serde.cpp
// deserialize_one_cell_from_json: the text goes to fast_float, which
// accepts nan).
func TestProtobufWellKnownTypesLoaded(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, "CREATE TABLE proto_wkt (id BIGINT, u32 BIGINT, f32 BIGINT, sf64 BIGINT, took DOUBLE, attrs JSON, "+
		"any_value JSON, list JSON, extra JSON, nothing JSON, at VARCHAR(16), by_id JSON, flags JSON, w_bool BOOLEAN, "+
		"w_dbl DOUBLE, nan DOUBLE, inners JSON) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	a.table, a.format = "proto_wkt", FormatProtobuf
	enc := a.protoSerde(protoWKTSchema, 1)
	a.produce(&kgo.Record{Value: enc(`{"id":"0","u32":4294967295,"f32":4000000000,"sf64":"-42","took":"90.5s",
		"attrs":{"a":1,"b":[true,null,"s"]},"anyValue":{"k":"v"},"list":[1,"two"],
		"extra":{"@type":"type.googleapis.com/google.protobuf.Empty","value":{}},"nothing":{},
		"at":{"hours":13,"minutes":5,"seconds":7,"nanos":89000000},"byId":{"7":{"x":1}},"flags":{"true":"yes"},
		"wBool":false,"wDbl":2.5,"nan":"NaN","inners":[{"x":1},{}]}`)})
	cfg := a.config()
	cfg.Schemas = a.registrySchemas(sr.TypeProtobuf, nil)
	if err := a.runToEnd(ctxFor(t), a.connector(cfg, nil)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := storedByID(t, a.env, "proto_wkt", []string{"id", "u32", "f32", "sf64", "took", "attrs", "any_value", "list",
		"extra", "nothing", "at", "by_id", "flags", "w_bool", "w_dbl", "nan", "inners"})[0]
	for _, tc := range []struct{ what, col, want string }{
		{"uint32 max", "u32", "4294967295"},
		{"fixed32 above int32", "f32", "4000000000"},
		{"sfixed64", "sf64", "-42"},
		{"Duration as seconds", "took", "90.5"},
		{"Struct as its JSON", "attrs", `{"a":1,"b":[true,null,"s"]}`},
		{"Value as its JSON", "any_value", `{"k":"v"}`},
		{"ListValue as its JSON", "list", `[1,"two"]`},
		{"Any as type_url and base64 value", "extra", `{"type_url":"type.googleapis.com/google.protobuf.Empty","value":""}`},
		{"Empty as {}", "nothing", `{}`},
		{"TimeOfDay as text", "at", "13:05:07.089000"},
		{"map with int32 keys", "by_id", `{"7":{"x":1}}`},
		{"map with bool keys", "flags", `{"true":"yes"}`},
		{"BoolValue false", "w_bool", "0"},
		{"DoubleValue", "w_dbl", "2.5"},
		{"NaN double: written as \"NaN\", stored as NaN", "nan", "NaN"},
		{"repeated message, zero fields written", "inners", `[{"x":1},{"x":0}]`},
	} {
		t.Run(tc.what, func(t *testing.T) {
			if got[tc.col] != tc.want && !sameJSONObject(got[tc.col], tc.want) {
				t.Errorf("column %s = %q, want %q", tc.col, got[tc.col], tc.want)
			}
		})
	}
}

// sameJSONObject reports whether a and b are JSON objects with the same
// members: a protobuf map (Struct's fields) has no order on the wire, and
// the producer writes its entries in map order.
func sameJSONObject(a, b string) bool {
	var x, y map[string]any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
