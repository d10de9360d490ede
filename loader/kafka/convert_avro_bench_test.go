package kafka

import (
	"context"
	"math/big"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/registry"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// benchAvroSchema carries benchJSON1K's data (the amount as a decimal).
const benchAvroSchema = `{"type":"record","name":"Row","fields":[{"name":"id","type":"long"},{"name":"ts","type":"long"},
	{"name":"customer","type":"string"},{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
	{"name":"note","type":"string"}]}`

// BenchmarkConvertAvro1K is the hot path of records.format avro on the
// data of BenchmarkConvertJSONCompact1K: wire header, the cached decoder
// by id, the walk into the Converter's buffer. Compare ns/op of the two
// for the avro/json cost per record.
func BenchmarkConvertAvro1K(b *testing.B) {
	srv, err := srtest.NewServer()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	id, err := srv.Registry().Register("t-value", sr.Schema{Schema: benchAvroSchema})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.New(registry.Config{URLs: []string{srv.URL()}, SchemaType: sr.TypeAvro})
	if err != nil {
		b.Fatal(err)
	}
	note := benchJSON1K[len(`{"id":123456,"ts":1760000123456,"customer":"c-456","amount":23456.25,"note":"`) : len(benchJSON1K)-2]
	var serde sr.Serde
	as := avro.MustParse(benchAvroSchema)
	serde.Register(id, map[string]any{}, sr.EncodeFn(func(v any) ([]byte, error) { return avro.Marshal(as, v) }))
	value := serde.MustEncode(map[string]any{"id": int64(123456), "ts": int64(1760000123456), "customer": "c-456",
		"amount": big.NewRat(2345625, 100), "note": string(note)})
	c := mustConverter(b, ConvertConfig{Format: FormatAvro, Schemas: reg})
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
