package jsonschemarow

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

var fuzzSeeds = []string{
	`{}`, ` { "id" : 1 } `, `{"at":"2024-02-29T23:59:58.1234567Z","note":"x\"y"}`,
	`{"shipped_at":null,"customer":{"name":"a","since":"2020-05-06T07:08:09+02:00"}}`,
	`{"lines":[{"sku":"s","packed_at":"2021-01-01T00:00:00Z","children":[{"packed_at":"x"}]}]}`,
	`{"labels":{"a\u0062":"2022-02-02T02:02:02Z","x":"2022-02-02T02:02:02Z"},"n":[1.5e3,-0,true,false,null]}`,
	`[1]`, `"s"`, `{"a":}`, `{"at":"0000-01-01T00:00:00+01:00"}`,
}

// FuzzAppendJSON: no payload panics; a payload is accepted exactly when
// json.Valid accepts it and it is an object; a row is one valid JSON object; with
// date-time rewriting off the row is exactly json.Compact of the payload,
// and with it on the row has the same shape (same keys, same array
// lengths, only date-time strings changed).
func FuzzAppendJSON(f *testing.F) {
	rewrite := newOrderDecoder(f, Options{})
	keep := newOrderDecoder(f, Options{KeepDateTime: true})
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		kept, kerr := keep.AppendJSON(nil, payload)
		got, err := rewrite.AppendJSON(nil, payload)
		i := skipSpace(payload, 0)
		if wantOK := json.Valid(payload) && payload[i] == '{'; wantOK != (kerr == nil) {
			t.Fatalf("%q: json.Valid and an object: %v, but AppendJSON: %v", payload, wantOK, kerr)
		}
		if kerr != nil {
			if err == nil {
				t.Fatalf("%q: refused with KeepDateTime (%v) but not without", payload, kerr)
			}
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, payload); err != nil {
			t.Fatalf("%q accepted but json.Compact fails: %v", payload, err)
		}
		if !bytes.Equal(kept, want.Bytes()) {
			t.Fatalf("%q: row %s, want %s", payload, kept, want.Bytes())
		}
		if err != nil {
			return // a date-time outside Doris's range
		}
		if len(got) == 0 || got[0] != '{' || !json.Valid(got) {
			t.Fatalf("%q: row %q is not a JSON object", payload, got)
		}
		var a, b any
		_ = json.Unmarshal(kept, &a)
		_ = json.Unmarshal(got, &b)
		if !sameShape(a, b) {
			t.Fatalf("%q: rewritten row %s differs in shape from %s", payload, got, kept)
		}
	})
}

// sameShape: equal except that strings may differ.
func sameShape(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameShape(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameShape(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		_, ok := b.(string)
		return ok
	}
	return a == b
}

// FuzzHostileSchema fuzzes the schema text and the payload together
// (issue 25): any schema is refused (the pre-scan's bounds among the
// reasons) or compiles, with and without validation, and a compiled one
// turns any payload into one JSON object within the row bound or a
// *DecodeError, never a panic or a crash.
func FuzzHostileSchema(f *testing.F) {
	f.Add(refChain(MaxSchemaRefs), []byte(`{"a":"2024-01-02T03:04:05Z"}`))
	f.Add(refChain(20), []byte(`{"a":"2024-01-02T03:04:05Z"}`))
	f.Add(`{"type":"object","properties":{"n":{"$ref":"#"},"t":{"type":"string","format":"date-time"}}}`,
		[]byte(`{"n":{"n":{"t":"2024-01-02T03:04:05+08:00"}},"t":"x"}`))
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/$defs/d"}}},"$defs":{"d":{"type":"string","format":"date-time"}}}`,
		[]byte(`{"a":["2024-01-02T03:04:05Z",1,null]}`))
	const maxRow = 1 << 16
	f.Fuzz(func(t *testing.T, schema string, payload []byte) {
		for _, validate := range []bool{false, true} {
			d, err := New(schema, nil, Options{Validate: validate, MaxRowBytes: maxRow})
			if err != nil {
				continue
			}
			row, err := d.AppendJSON([]byte("pre"), payload)
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) || string(row) != "pre" {
					t.Fatalf("err %v (%T), row %.40q", err, err, row)
				}
				continue
			}
			if len(row)-3 > maxRow {
				t.Fatalf("row of %d bytes passed the bound %d", len(row)-3, maxRow)
			}
			if row[3] != '{' || !json.Valid(row[3:]) {
				t.Fatalf("row is not a JSON object: %.200q", row[3:])
			}
		}
	})
}
