package jsonschemarow

import (
	"testing"
)

// benchJSON1K is loader/kafka's benchJSON1K: a compact 1 KiB object.
var benchJSON1K = func() []byte {
	b := []byte(`{"id":123456,"ts":1760000123456,"customer":"c-456","amount":23456.25,"note":"`)
	for len(b) < 1022 {
		b = append(b, "0123456789abcdef"[len(b)%16])
	}
	return append(b, `"}`...)
}()

const benchSchema = `{"type":"object","properties":{"id":{"type":"integer"},"ts":{"type":"integer"},
	"customer":{"type":"string"},"amount":{"type":"number"},"note":{"type":"string"}},"required":["id"]}`

func benchDecoder(b *testing.B, schema string, opt Options) *Decoder {
	d, err := New(schema, nil, opt)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func runBench(b *testing.B, d *Decoder, payload []byte) {
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

// BenchmarkAppendJSON1K: pass-through (check and compact), the default.
func BenchmarkAppendJSON1K(b *testing.B) {
	runBench(b, benchDecoder(b, benchSchema, Options{}), benchJSON1K)
}

// BenchmarkAppendJSON1KValidate: with Options.Validate.
func BenchmarkAppendJSON1KValidate(b *testing.B) {
	runBench(b, benchDecoder(b, benchSchema, Options{Validate: true}), benchJSON1K)
}

// BenchmarkAppendJSON1KDateTime: the schema declares ts a date-time, so
// every record is walked and one string rewritten.
func BenchmarkAppendJSON1KDateTime(b *testing.B) {
	payload := []byte(`{"id":123456,"ts":"2025-10-09T08:55:23.456Z","customer":"c-456","amount":23456.25,"note":"` +
		string(benchJSON1K[len(`{"id":123456,"ts":1760000123456,"customer":"c-456","amount":23456.25,"note":"`):]))
	runBench(b, benchDecoder(b, `{"properties":{"ts":{"type":"string","format":"date-time"}}}`, Options{}), payload)
}
