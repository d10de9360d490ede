package avrorow

import (
	"math/big"
	"strings"
	"testing"
	"time"
)

// benchSchema is an order row of about 1 KiB as JSON (the bench's Avro
// case carries the same logical data).
var benchSchema = record(`{"name":"id","type":"long"},{"name":"customer","type":"string"},
	{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
	{"name":"created","type":{"type":"long","logicalType":"timestamp-micros"}},
	{"name":"status","type":{"type":"enum","name":"S","symbols":["NEW","PAID","SHIPPED"]}},
	{"name":"note","type":["null","string"]},{"name":"tags","type":{"type":"array","items":"string"}},
	{"name":"qty","type":"int"},{"name":"price","type":"double"}`)

func BenchmarkAppendJSON(b *testing.B) {
	v := map[string]any{"id": int64(123456789), "customer": "customer-0042", "amount": big.NewRat(123456, 100),
		"created": time.Date(2026, 12, 1, 10, 30, 0, 123456000, time.UTC), "status": "PAID",
		"note": strings.Repeat("lorem ipsum dolor sit amet ", 30), "tags": []string{"a", "bb", "ccc"},
		"qty": int32(3), "price": 19.99}
	t := &testing.T{}
	p := encode(t, benchSchema, v)
	d, err := New(benchSchema, nil, Options{TimeZone: time.FixedZone("X", 3600)})
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 4096)
	out, err := d.AppendJSON(dst, p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	b.ReportMetric(float64(len(out)), "json-bytes/op")
	for b.Loop() {
		if _, err := d.AppendJSON(dst[:0], p); err != nil {
			b.Fatal(err)
		}
	}
}
