package kafka

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// jsonSerde registers schema (JSON Schema) under the topic's value subject
// and returns an encoder of JSON documents in the wire format (pkg/sr
// Serde; a JSON Schema payload has no message index).
func (a *avroEnv) jsonSerde(schema string) func(doc string) []byte {
	a.t.Helper()
	ss, err := a.sr.CreateSchema(ctxFor(a.t), testTopic+"-value", sr.Schema{Schema: schema, Type: sr.TypeJSON})
	if err != nil {
		a.t.Fatal(err)
	}
	var s sr.Serde
	s.Register(ss.ID, "", sr.EncodeFn(func(v any) ([]byte, error) { return []byte(v.(string)), nil }))
	return func(doc string) []byte {
		b, err := s.Encode(doc)
		if err != nil {
			a.t.Fatal(err)
		}
		return b
	}
}

const jsonTypesSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Row","type":"object",
"properties":{
  "id":{"type":"integer"},
  "big":{"type":"integer"},
  "price":{"type":"number"},
  "amount":{"type":"number"},
  "flag":{"type":"boolean"},
  "name":{"type":"string"},
  "at":{"type":"string","format":"date-time"},
  "at_off":{"type":"string","format":"date-time"},
  "maybe_at":{"oneOf":[{"type":"null","title":"Not included"},{"type":"string","format":"date-time"}]},
  "bad_at":{"type":"string","format":"date-time"},
  "raw_at":{"type":"string"},
  "nested":{"$ref":"#/definitions/inner"},
  "tags":{"type":"array","items":{"type":"string"}}
},
"required":["id"],
"definitions":{"inner":{"type":"object","properties":{"x":{"type":"integer"},"when":{"type":"string","format":"date-time"}}}}}`

const jsonTypesDDL = "CREATE TABLE json_types (id BIGINT, big BIGINT, price DOUBLE, amount DECIMAL(12,2), flag BOOLEAN, " +
	"name VARCHAR(16), at DATETIME(6), at_off DATETIME(6), maybe_at DATETIME(6), bad_at VARCHAR(32), raw_at VARCHAR(32), " +
	"nested JSON, tags JSON) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"

var jsonTypesCols = []string{"id", "big", "price", "amount", "flag", "name", "at", "at_off", "maybe_at", "bad_at", "raw_at", "nested", "tags"}

// TestJSONSchemaTypesLoaded produces JSON Schema records with pkg/sr
// serde through the in-process registry, loads them exactly once, and
// checks the stored values of each row of the JSON Schema type table
// (docs/configuration.md): date-time strings, found through oneOf and
// $ref, rewritten into records.time_zone (+08:00); other values as written.
func TestJSONSchemaTypesLoaded(t *testing.T) {
	t.Parallel()
	a := newAvroEnv(t, jsonTypesDDL)
	a.table, a.format = "json_types", FormatJSONSchema
	enc := a.jsonSerde(jsonTypesSchema)
	a.produce(&kgo.Record{Value: enc(`{ "id": 0, "big": 9007199254740993, "price": 19.5, "amount": -1234567890.05, "flag": true,
		"name": "h\u00e9llo", "at": "2024-02-29T23:59:58.1234567Z", "at_off": "2024-03-01T01:00:00.5+02:00", "maybe_at": null,
		"bad_at": "yesterday", "raw_at": "2024-02-29T23:59:58Z", "nested": {"x": 1, "when": "2024-02-29T16:00:00Z"}, "tags": ["a", "b"] }`)},
		&kgo.Record{Value: enc(`{"id":1,"maybe_at":"2024-02-29t16:00:00z","amount":1234567890123.5}`)})
	cfg := a.config()
	cfg.Schemas = a.registrySchemas(sr.TypeJSON, time.FixedZone("UTC+8", 8*3600))
	if err := a.runToEnd(ctxFor(t), a.connector(cfg, nil)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	a.checkExactlyOnce(2)
	got := storedByID(t, a.env, "json_types", jsonTypesCols)
	for _, tc := range []struct {
		row       int64
		what, col string
		want      string
	}{
		{0, "integer beyond 2^53, exact", "big", "9007199254740993"},
		{0, "number", "price", "19.5"},
		{0, "number into DECIMAL", "amount", "-1234567890.05"},
		{0, "boolean", "flag", "1"},
		{0, "string with an escape", "name", "héllo"},
		{0, "date-time Z into records.time_zone, truncated to µs", "at", "2024-03-01 07:59:58.123456"},
		{0, "date-time with an offset into records.time_zone", "at_off", "2024-03-01 07:00:00.500000"},
		{0, "null of a nullable date-time", "maybe_at", "<nil>"},
		{0, "date-time that does not parse: as written", "bad_at", "yesterday"},
		{0, "string without format date-time: as written", "raw_at", "2024-02-29T23:59:58Z"},
		{0, "nested object into JSON, its date-time ($ref) rewritten", "nested", `{"x":1,"when":"2024-03-01 00:00:00.000000"}`},
		{0, "array into JSON", "tags", `["a","b"]`},
		{1, "date-time in lower case through oneOf", "maybe_at", "2024-03-01 00:00:00.000000"},
		{1, "absent property: NULL", "at", "<nil>"},
		{1, "number overflowing DECIMAL(12,2): NULL (non-strict load)", "amount", "<nil>"},
	} {
		t.Run(fmt.Sprintf("row %d %s", tc.row, tc.what), func(t *testing.T) {
			if v := got[tc.row][tc.col]; v != tc.want {
				t.Errorf("row %d column %s = %q, want %q", tc.row, tc.col, v, tc.want)
			}
		})
	}
}

// TestJSONSchemaValidate: with registry.Config.Validate
// (records.json_schema.validate) a record that does not match its schema
// is dead-lettered, naming its offset and schema id; the records around
// it load. Without it the same record loads (the Confluent deserializer's
// json.fail.invalid.schema default, false).
func TestJSONSchemaValidate(t *testing.T) {
	t.Parallel()
	for _, validate := range []bool{true, false} {
		t.Run(fmt.Sprintf("validate=%v", validate), func(t *testing.T) {
			t.Parallel()
			a := newAvroEnv(t, "") // the orders table
			a.format = FormatJSONSchema
			ctx := ctxFor(t)
			if _, err := a.adm.CreateTopic(ctx, 1, 1, nil, "orders-dlq"); err != nil {
				t.Fatal(err)
			}
			enc := a.jsonSerde(`{"type":"object","properties":{"id":{"type":"integer"},"v":{"type":"string","maxLength":4}},"required":["id"]}`)
			a.produce(&kgo.Record{Value: enc(`{"id":0,"v":"v0"}`)}, &kgo.Record{Value: enc(`{"id":1,"v":"too long"}`)},
				&kgo.Record{Value: enc(`{"id":2,"v":"v2"}`)})
			cfg := a.config()
			cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
			c, err := registry.New(registry.Config{URLs: []string{a.reg.URL()}, SchemaType: sr.TypeJSON, Validate: validate, Attempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Schemas = c
			conn := a.connector(cfg, nil)
			if err := a.runToEnd(ctx, conn); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !validate {
				a.checkExactlyOnce(3)
				return
			}
			a.checkExactlyOnce(3, 1)
			if got := conn.Metrics().DeadLettered.Load(); got != 1 {
				t.Fatalf("DeadLettered = %d, want 1 (the record whose v is longer than maxLength)", got)
			}
			dl := a.readDLQ("orders-dlq")
			if len(dl) != 1 {
				t.Fatalf("dead-letter topic holds %d records, want 1", len(dl))
			}
			h := headers(dl[0])
			if h[HeaderOffset] != "1" || !strings.Contains(h[HeaderError], "schema id 1") || !strings.Contains(h[HeaderError], "maxLength") {
				t.Fatalf("dead-letter headers %v, want offset 1 and an error naming schema id 1 and maxLength", h)
			}
		})
	}
}
