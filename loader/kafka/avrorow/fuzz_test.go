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

// FuzzHostileSchema fuzzes the schema and the payload together (issue
// 25): any schema text is refused by New or compiles; a compiled one
// turns any payload into valid JSON within the row bound or a
// *DecodeError, without a panic or a crash (the seeds include issue 25's
// recursion and zero-width-item records).
func FuzzHostileSchema(f *testing.F) {
	f.Add(recursiveSchema, deepPayload(MaxDepth+10))
	f.Add(nullsSchema, nullBlocksPayload(1000))
	f.Add(fuzzSchema, []byte{2, 4, 0, 0, 0, 2, 'k', 2, 0, 2, 1, 'a', 'b', 'c', 0, 0, 0, 0})
	f.Add(`{"type":"record","name":"E","fields":[{"name":"e","type":{"type":"array","items":{"type":"record","name":"F","fields":[]}}}]}`,
		[]byte{0xfe, 0xff, 0x7f, 0})
	f.Add(`{"type":"record","name":"M","fields":[{"name":"m","type":{"type":"map","values":["null","M"]}}]}`, []byte{2, 2, 'k', 2, 2, 2, 'k', 0, 0, 0})
	const maxRow = 1 << 16
	f.Fuzz(func(t *testing.T, schema string, payload []byte) {
		d, err := New(schema, nil, Options{MaxRowBytes: maxRow})
		if err != nil {
			return
		}
		out, err := d.AppendJSON([]byte("pre"), payload)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || string(out) != "pre" {
				t.Fatalf("err %v (%T), out %.40q", err, err, out)
			}
			return
		}
		if len(out)-3 > maxRow+1 {
			t.Fatalf("row of %d bytes passed the bound %d", len(out)-3, maxRow)
		}
		if !json.Valid(out[3:]) {
			t.Fatalf("invalid JSON %.200q from %x", out[3:], payload)
		}
	})
}
