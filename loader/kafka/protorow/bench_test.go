package protorow

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// benchNote makes the record the same logical data as loader/kafka's
// benchJSON1K (a 1 KiB JSON object): the same five fields and note text.
func benchNote() string {
	b := []byte(`{"id":123456,"ts":1760000123456,"customer":"c-456","amount":23456.25,"note":"`)
	start := len(b)
	for len(b) < 1022 {
		b = append(b, "0123456789abcdef"[len(b)%16])
	}
	return string(b[start:])
}

func benchPayload(b *testing.B) (*Decoder, []byte) {
	d, err := New(readTestdata(b, "bench.proto"), nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	m := message(b, d, "bench.Record", `{"id":"123456","ts":"1760000123456","customer":"c-456","amount":23456.25}`)
	m.Set(m.Descriptor().Fields().ByName("note"), protoValueOf(benchNote()))
	return d, encode(b, m)
}

// BenchmarkAppendJSON1K decodes the 1 KiB record into a JSON row (compare
// with loader/kafka BenchmarkConvertJSONCompact1K on the same data).
func BenchmarkAppendJSON1K(b *testing.B) {
	d, payload := benchPayload(b)
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		var err error
		if buf, err = d.AppendJSON(buf[:0], payload); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkDynamicpbProtojson1K is the alternative the walker replaces:
// proto.Unmarshal into a dynamicpb message, then protojson.Marshal.
func BenchmarkDynamicpbProtojson1K(b *testing.B) {
	d, payload := benchPayload(b)
	md := findMessage(b, d, "bench.Record")
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		m := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(payload[1:], m); err != nil {
			b.Fatal(err)
		}
		if _, err := (protojson.MarshalOptions{UseProtoNames: true}).Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
