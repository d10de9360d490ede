package protorow

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// fuzzSeeds are Orders (protojson) whose encodings seed FuzzAppendJSON.
var fuzzSeeds = []string{
	`{}`,
	`{"i32":-1,"i64":"5","u64":"18446744073709551615","s32":-3,"f32":1,"sf64":"-2","fl":0.5,"db":"NaN","ok":true}`,
	`{"name":"é\"x","raw":"AAE=","status":"PAID","statuses":["SHIPPED",9]}`,
	`{"item":{"sku":"a","qty":1},"items":[{"sku":"b"}],"parent":{"parent":{"i32":2}}}`,
	`{"nums":["1","2"],"unpacked":["3"],"tags":["x"],"dbls":[1.5,"Infinity"]}`,
	`{"counts":{"a":"1"},"by_id":{"3":{"sku":"s"}},"flags":{"true":"y"}}`,
	`{"card":"visa","opt":0,"at":"2024-01-02T03:04:05.678Z","took":"-1.5s"}`,
	`{"w_i64":"1","w_str":"s","w_bool":true,"w_dbl":2,"attrs":{"k":[1,null,{"x":"y"}]},"any_value":"v","list":[true]}`,
}

// FuzzAppendJSON: no payload panics; a row that decodes is one valid JSON
// object, and protobuf-go accepts the same bytes (the walker is never more
// lenient about the wire format than the reference parser).
func FuzzAppendJSON(f *testing.F) {
	d := newOrderDecoder(f, Options{})
	for _, js := range fuzzSeeds {
		f.Add(encode(f, message(f, d, "shop.Order", js)))
	}
	f.Add(encode(f, message(f, d, "shop.Item.Note", `{"text":"n"}`), 1, 0))
	md := findMessage(f, d, "shop.Order")
	connect, err := New(readTestdata(f, "connect.proto"), nil, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(encode(f, message(f, connect, "connect.Row", `{"amount":{"value":"AQI=","scale":1},"day":{"year":1},"at":{"hours":1}}`)))
	f.Fuzz(func(t *testing.T, payload []byte) {
		if row, err := connect.AppendJSON(nil, payload); err == nil && (len(row) == 0 || row[0] != '{' || !json.Valid(row)) {
			t.Fatalf("connect.Row: row is not a JSON object: %q", row)
		}
		row, err := d.AppendJSON(nil, payload)
		if err != nil {
			return
		}
		if len(row) == 0 || row[0] != '{' || !json.Valid(row) {
			t.Fatalf("row is not a JSON object: %q", row)
		}
		if len(payload) > 0 && payload[0] == 0 {
			if err := proto.Unmarshal(payload[1:], dynamicpb.NewMessage(md)); err != nil {
				t.Fatalf("decoded %q to %s, but protobuf-go rejects it: %v", payload, row, err)
			}
		}
	})
}

// FuzzHostileSchema fuzzes the .proto text and the payload together
// (issue 25): any schema compiles or is refused, and a compiled one turns
// any payload into one JSON object within the row bound or an error,
// never a panic or a crash.
func FuzzHostileSchema(f *testing.F) {
	f.Add("syntax = \"proto3\";\nmessage N { N n = 1; }\n", nested(maxDepth+2))
	f.Add(wideSchema(), append([]byte{0}, bytes.Repeat([]byte{0x0a, 0}, 500)...))
	f.Add("syntax = \"proto3\";\nmessage M { map<string, M> m = 1; repeated string s = 2; oneof o { int64 a = 3; M b = 4; } }\n",
		[]byte{0, 0x0a, 5, 0x0a, 1, 'k', 0x12, 0, 0x12, 1, 'x', 0x18, 1, 0x22, 0})
	f.Add("syntax = \"proto2\";\nmessage G { optional group Q = 1 { optional int32 v = 2; } }\n", []byte{0, 0x0b, 0x10, 1, 0x0c})
	const maxRow = 1 << 16
	f.Fuzz(func(t *testing.T, schema string, payload []byte) {
		d, err := New(schema, nil, Options{MaxRowBytes: maxRow})
		if err != nil {
			return
		}
		row, err := d.AppendJSON(nil, payload)
		if err != nil {
			return
		}
		if len(row) > maxRow+1 {
			t.Fatalf("row of %d bytes passed the bound %d", len(row), maxRow)
		}
		if len(row) == 0 || row[0] != '{' || !json.Valid(row) {
			t.Fatalf("row is not a JSON object: %.200q", row)
		}
	})
}
