package bench

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/doris-sink/doris-sink/loader/kafka/protorow"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// The protobuf rows carry the json rows' data: decoded with protoSchema
// they are the json row, field for field and value for value; the bytes
// are what proto.Marshal writes for the same message.
func TestProtobufRowsCarryTheJSONData(t *testing.T) {
	t.Parallel()
	js, pb := newRowGen("json", 1024, 7), newRowGen("protobuf", 1024, 7)
	pb.protoSchemaID = 4
	d, err := protorow.New(protoSchema, nil, protorow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int64{0, 1, 99999, 123456789} {
		jrow := js.appendRow(nil, i)
		value := pb.appendRow(nil, i)
		id, payload, err := registry.ParseHeader(value)
		if err != nil || id != 4 {
			t.Fatalf("header: id %d, %v", id, err)
		}
		got, err := d.AppendJSON(nil, payload)
		if err != nil {
			t.Fatal(err)
		}
		var a, b map[string]any
		if err := json.Unmarshal(jrow, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatal(err)
		}
		if string(mustMarshal(t, a)) != string(mustMarshal(t, b)) {
			t.Fatalf("row %d: protobuf decodes to %s, json row %s", i, got, jrow)
		}
		if len(value) >= len(jrow) {
			t.Fatalf("row %d: protobuf %d bytes, json %d: want smaller", i, len(value), len(jrow))
		}
		// payload[0] is the message index [0]; the rest is the message.
		m := dynamicpb.NewMessage(d.File().Messages().Get(0))
		if err := proto.Unmarshal(payload[1:], m); err != nil {
			t.Fatal(err)
		}
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, payload[1:]) {
			t.Fatalf("row %d: generated % x, proto.Marshal % x", i, payload[1:], want)
		}
	}
}
