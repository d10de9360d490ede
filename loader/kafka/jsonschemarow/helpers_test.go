package jsonschemarow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newOrderDecoder(t testing.TB, opt Options) *Decoder {
	t.Helper()
	d, err := New(readTestdata(t, "order.json"), map[string]string{"customer.json": readTestdata(t, "customer.json")}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// encode serializes the JSON text v with franz-go's sr serde (Confluent
// wire format, schema id 9) and returns the payload after the 5-byte header.
func encode(t testing.TB, v string) []byte {
	t.Helper()
	var serde sr.Serde
	serde.Register(9, json.RawMessage{}, sr.EncodeFn(func(v any) ([]byte, error) { return v.(json.RawMessage), nil }))
	b, err := serde.Encode(json.RawMessage(v))
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0 || b[4] != 9 {
		t.Fatalf("unexpected header % x", b[:5])
	}
	return b[5:]
}

func row(t testing.TB, d *Decoder, v string) string {
	t.Helper()
	out, err := d.AppendJSON(nil, encode(t, v))
	if err != nil {
		t.Fatalf("AppendJSON(%s): %v", v, err)
	}
	return string(out)
}
