package kafka

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/doris-sink/doris-sink/loader/kafka/protorow"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// benchProtoSchema carries benchJSON1K's data (the amount as a double,
// the JSON number's type).
const benchProtoSchema = `syntax = "proto3";
message Row { int64 id = 1; int64 ts = 2; string customer = 3; double amount = 4; string note = 5; }`

// BenchmarkConvertProtobuf1K is the hot path of records.format protobuf
// on the data of BenchmarkConvertJSONCompact1K and BenchmarkConvertAvro1K:
// wire header, the cached decoder by id, the message index, the walk into
// the Converter's buffer.
func BenchmarkConvertProtobuf1K(b *testing.B) {
	srv, err := srtest.NewServer()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	id, err := srv.Registry().Register("t-value", sr.Schema{Schema: benchProtoSchema, Type: sr.TypeProtobuf})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New(registry.Config{URLs: []string{srv.URL()}, SchemaType: sr.TypeProtobuf})
	if err != nil {
		b.Fatal(err)
	}
	d, err := protorow.New(benchProtoSchema, nil, protorow.Options{})
	if err != nil {
		b.Fatal(err)
	}
	note := benchJSON1K[len(`{"id":123456,"ts":1760000123456,"customer":"c-456","amount":23456.25,"note":"`) : len(benchJSON1K)-2]
	md := d.File().Messages().Get(0)
	m := dynamicpb.NewMessage(md)
	f := md.Fields()
	m.Set(f.ByName("id"), protoreflect.ValueOfInt64(123456))
	m.Set(f.ByName("ts"), protoreflect.ValueOfInt64(1760000123456))
	m.Set(f.ByName("customer"), protoreflect.ValueOfString("c-456"))
	m.Set(f.ByName("amount"), protoreflect.ValueOfFloat64(23456.25))
	m.Set(f.ByName("note"), protoreflect.ValueOfString(string(note)))
	var serde sr.Serde
	serde.Register(id, m, sr.Index(0), sr.EncodeFn(func(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }))
	value := serde.MustEncode(m)
	c := mustConverter(b, ConvertConfig{Format: FormatProtobuf, Schemas: reg})
	r := rec("")
	r.Value = value
	if _, err := c.ConvertContext(context.Background(), r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(value)))
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
}
