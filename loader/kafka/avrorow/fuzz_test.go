package avrorow

import (
	"encoding/json"
	"errors"
	"testing"
)

// fuzzSchema covers every node kind.
var fuzzSchema = record(`{"name":"a","type":["null","long","string"]},{"name":"b","type":{"type":"array","items":"double"}},
	{"name":"m","type":{"type":"map","values":{"type":"enum","name":"E","symbols":["X","Y"]}}},
	{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":40,"scale":3}},
	{"name":"f","type":{"type":"fixed","name":"F","size":3}},{"name":"t","type":{"type":"long","logicalType":"timestamp-micros"}},
	{"name":"day","type":{"type":"int","logicalType":"date"}},{"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
	{"name":"r","type":["null",{"type":"record","name":"In","fields":[{"name":"s","type":"string"},{"name":"ok","type":"boolean"},{"name":"fl","type":"float"}]}]}`)

// FuzzAppendJSON: any payload either decodes to valid JSON or is a
// *DecodeError; it never panics, and dst is left as given on error.
func FuzzAppendJSON(f *testing.F) {
	d, err := New(fuzzSchema, nil, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{2, 4, 0, 0, 0, 2, 'k', 2, 0, 2, 1, 'a', 'b', 'c', 0, 0, 0, 0})
	f.Add([]byte{4, 6, 'x', 'y', 'z'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, payload []byte) {
		out, err := d.AppendJSON([]byte("pre"), payload)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || string(out) != "pre" {
				t.Fatalf("err %v (%T), out %q", err, err, out)
			}
			return
		}
		if !json.Valid(out[3:]) {
			t.Fatalf("invalid JSON %q from %x", out[3:], payload)
		}
	})
}

// FuzzParse: any schema text parses or is refused, never a panic; a
// parsed schema can read data written with itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{fuzzSchema, `"int"`, `["null","string"]`, `{"type":"map","values":{"type":"array","items":"long"}}`,
		`{"type":"record","name":"L","fields":[{"name":"n","type":["null","L"]}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text, nil)
		if err != nil {
			return
		}
		if err := s.CanRead(s); err != nil {
			t.Fatalf("%s cannot read itself: %v", text, err)
		}
	})
}
