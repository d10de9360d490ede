package protorow

import (
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
