package protorow

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// orderRefs are the references of testdata/order.proto, keyed by import
// path as the registry names them.
func orderRefs(t testing.TB) map[string]string {
	return map[string]string{"common/money.proto": readTestdata(t, "money.proto")}
}

func newOrderDecoder(t testing.TB, opt Options) *Decoder {
	t.Helper()
	d, err := New(readTestdata(t, "order.proto"), orderRefs(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// message builds a dynamic message of type name (from d's compiled schema)
// from its protojson text.
func message(t testing.TB, d *Decoder, name, js string) *dynamicpb.Message {
	t.Helper()
	md := findMessage(t, d, name)
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(js), m); err != nil {
		t.Fatalf("protojson %s: %v", js, err)
	}
	return m
}

func findMessage(t testing.TB, d *Decoder, name string) protoreflect.MessageDescriptor {
	t.Helper()
	desc, err := findDescriptor(d.file, protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	return desc
}

func findDescriptor(fd protoreflect.FileDescriptor, name protoreflect.FullName) (protoreflect.MessageDescriptor, error) {
	var walk func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor
	walk = func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor {
		for i := range ms.Len() {
			if ms.Get(i).FullName() == name {
				return ms.Get(i)
			}
			if m := walk(ms.Get(i).Messages()); m != nil {
				return m
			}
		}
		return nil
	}
	if m := walk(fd.Messages()); m != nil {
		return m, nil
	}
	return nil, os.ErrNotExist
}

// encode serializes m with franz-go's sr serde (the Confluent wire format,
// schema id 7, the given message index, default [0]) and returns the payload after the
// 5-byte header, as the decoder gets it.
func encode(t testing.TB, m proto.Message, index ...int) []byte {
	t.Helper()
	var serde sr.Serde
	if len(index) == 0 {
		index = []int{0}
	}
	serde.Register(7, m, sr.Index(index...),
		sr.EncodeFn(func(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }))
	b, err := serde.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0 || b[4] != 7 {
		t.Fatalf("unexpected header % x", b[:5])
	}
	return b[5:]
}

// decodeRow runs AppendJSON and checks that the row is one valid JSON
// object.
func decodeRow(t testing.TB, d *Decoder, payload []byte) []byte {
	t.Helper()
	row, err := d.AppendJSON(nil, payload)
	if err != nil {
		t.Fatalf("AppendJSON: %v", err)
	}
	if !json.Valid(row) || row[0] != '{' {
		t.Fatalf("row is not a JSON object: %s", row)
	}
	return row
}

// fields splits a row into its raw values by key.
func fields(t testing.TB, row []byte) map[string]string {
	t.Helper()
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(row))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("row %s: %v", row, err)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// orderField encodes an Order from protojson text and returns the raw JSON
// of one key of its row ("<absent>" when the row has no such key).
func orderField(t testing.TB, d *Decoder, js, key string) string {
	t.Helper()
	row := decodeRow(t, d, encode(t, message(t, d, "shop.Order", js), 0))
	v, ok := fields(t, row)[key]
	if !ok {
		return "<absent>"
	}
	return v
}

func protoValueOf(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }
