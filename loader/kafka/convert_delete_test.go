package kafka

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A configured field/value marks deletes: every row carries the delete
// sign, 1 for a match (docs/doris-facts.md §7: a row with __DORIS_DELETE_SIGN__ 1
// removes its key from a Unique Key table).
func TestConvertDeleteField(t *testing.T) {
	t.Parallel()
	c := mustConverter(t, ConvertConfig{Format: FormatJSON, Delete: DeleteConfig{Field: "op", Value: "d"}})
	for _, tc := range []struct{ in, want, err string }{
		{in: `{"id":1,"op":"d"}`, want: `{"id":1,"op":"d","__DORIS_DELETE_SIGN__":1}`},
		{in: `{"id":1, "op": "d"}`, want: `{"id":1,"op":"d","__DORIS_DELETE_SIGN__":1}`},
		{in: `{"id":1,"op":"u"}`, want: `{"id":1,"op":"u","__DORIS_DELETE_SIGN__":0}`},
		{in: `{"id":1}`, want: `{"id":1,"__DORIS_DELETE_SIGN__":0}`},
		{in: `{"id":1,"op":"\u0064"}`, want: `{"id":1,"op":"\u0064","__DORIS_DELETE_SIGN__":1}`},
		{in: `{"id":1,"\u006fp":"d"}`, want: `{"id":1,"\u006fp":"d","__DORIS_DELETE_SIGN__":1}`},
		{in: `{"id":1,"op":"d","op":"u"}`, want: `{"id":1,"op":"d","op":"u","__DORIS_DELETE_SIGN__":0}`}, // last wins
		{in: `{"id":1,"x":{"op":"d"}}`, want: `{"id":1,"x":{"op":"d"},"__DORIS_DELETE_SIGN__":0}`},       // top level only
		{in: `{"id":1,"op":null}`, want: `{"id":1,"op":null,"__DORIS_DELETE_SIGN__":0}`},
		{in: `{}`, want: `{"__DORIS_DELETE_SIGN__":0}`},
		{in: `{"id":1,"__DORIS_DELETE_SIGN__":1}`, err: "carries __DORIS_DELETE_SIGN__ itself"},
		{in: `{"id":1`, err: "invalid JSON"},
	} {
		got, err := c.Convert(rec(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	// Non-string values compare by their JSON literal.
	c = mustConverter(t, ConvertConfig{Format: FormatJSON, Delete: DeleteConfig{Field: "deleted", Value: "true"},
		Metadata: MetadataColumns{Offset: "kafka_offset"}})
	for in, want := range map[string]string{
		`{"id":1,"deleted":true}`:   `{"id":1,"deleted":true,"__DORIS_DELETE_SIGN__":1,"kafka_offset":41}`,
		`{"id":1,"deleted":false}`:  `{"id":1,"deleted":false,"__DORIS_DELETE_SIGN__":0,"kafka_offset":41}`,
		`{"id":1,"deleted":"true"}`: `{"id":1,"deleted":"true","__DORIS_DELETE_SIGN__":1,"kafka_offset":41}`,
		`{"id":1,"deleted":[true]}`: `{"id":1,"deleted":[true],"__DORIS_DELETE_SIGN__":0,"kafka_offset":41}`,
	} {
		if got, err := c.Convert(rec(in)); err != nil || string(got) != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	// A tombstone is still an error without records.delete.tombstones.
	if _, err := c.Convert(&kgo.Record{Key: []byte(`{"id":1}`)}); err == nil || !strings.Contains(err.Error(), "tombstone") {
		t.Errorf("tombstone without delete.tombstones: %v", err)
	}
}

// A tombstone (null value) with a JSON key deletes that key.
func TestConvertDeleteTombstone(t *testing.T) {
	t.Parallel()
	c := mustConverter(t, ConvertConfig{Format: FormatJSON, Delete: DeleteConfig{Tombstones: true}})
	for _, tc := range []struct{ key, want, err string }{
		{key: `{"id":7}`, want: `{"id":7,"__DORIS_DELETE_SIGN__":1}`},
		{key: `{ "id": 7, "region": "eu" }`, want: `{"id":7,"region":"eu","__DORIS_DELETE_SIGN__":1}`},
		{key: `{"schema":{"type":"struct"},"payload":{"id":7}}`, want: `{"id":7,"__DORIS_DELETE_SIGN__":1}`},
		{key: `{"schema":1,"payload":2}`, want: `{"schema":1,"payload":2,"__DORIS_DELETE_SIGN__":1}`}, // not an envelope
		{key: ``, err: "without a key"},
		{key: `7`, err: "JSON object carrying the key columns"},
		{key: `{}`, err: "empty object"},
		{key: `{"id":7,"__DORIS_DELETE_SIGN__":0}`, err: "carries __DORIS_DELETE_SIGN__"},
	} {
		r := &kgo.Record{Topic: "t", Key: []byte(tc.key)}
		if tc.key == "" {
			r.Key = nil
		}
		got, err := c.Convert(r)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("key %q: err %v, want one containing %q", tc.key, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("key %q: got %q, %v; want %q", tc.key, got, err, tc.want)
		}
	}
	// Non-tombstones get the sign 0 (the hidden column is always loaded).
	if got, err := c.Convert(rec(`{"id":7}`)); err != nil || string(got) != `{"id":7,"__DORIS_DELETE_SIGN__":0}` {
		t.Errorf("upsert: %q, %v", got, err)
	}
}

func TestDeleteConfigValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  ConvertConfig
		want string
	}{
		{ConvertConfig{Format: FormatDebezium, Delete: DeleteConfig{Tombstones: true}}, "only with records.format json"},
		{ConvertConfig{Format: FormatCSV, Delete: DeleteConfig{Field: "op", Value: "d"}}, "only with records.format json"},
		{ConvertConfig{Format: FormatJSON, Delete: DeleteConfig{Field: "op"}}, "go together"},
	} {
		if _, err := NewConverter(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if p := DeleteProperties(DeleteConfig{Tombstones: true}); p["hidden_columns"] != DeleteSignColumn {
		t.Errorf("DeleteProperties = %v", p)
	}
	if p := DeleteProperties(DeleteConfig{}); p != nil {
		t.Errorf("DeleteProperties(off) = %v", p)
	}
}

// BenchmarkConvertJSONCompact1KDelete is the hot path with
// records.delete.field: the row is copied to add the sign, and must stay
// allocation-free.
func BenchmarkConvertJSONCompact1KDelete(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatJSON, Delete: DeleteConfig{Field: "customer", Value: "c-456"}})
	r := rec(string(benchJSON1K))
	b.ReportAllocs()
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		row, err := c.Convert(r)
		if err != nil {
			b.Fatal(err)
		}
		if row[len(row)-2] != '1' {
			b.Fatal("not a delete")
		}
	}
}

// BenchmarkConvertTombstoneDelete: a tombstone with a small JSON key.
func BenchmarkConvertTombstoneDelete(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatJSON, Delete: DeleteConfig{Tombstones: true}})
	r := &kgo.Record{Topic: "orders", Key: []byte(`{"id":123456}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzConvertDelete: with records.delete.field op = "1", a row the
// converter produces carries the delete sign a reference decode by
// encoding/json expects (a string "1" or the number literal 1 at the top
// level, the last duplicate winning), and a record carrying the sign
// itself is refused.
func FuzzConvertDelete(f *testing.F) {
	for _, s := range []string{`{"id":1,"op":"1"}`, `{"op":1}`, `{"op":1.0}`, `{"op":"1","op":2}`, `{"\u006fp":"1"}`,
		`{"x":{"op":"1"}}`, `{"__DORIS_DELETE_SIGN__":0}`, `{"op":true}`, ` {"op" : "1" } `, `[1]`} {
		f.Add([]byte(s))
	}
	c := mustConverter(f, ConvertConfig{Format: FormatJSON, Delete: DeleteConfig{Field: "op", Value: "1"}})
	f.Fuzz(func(t *testing.T, v []byte) {
		got, err := c.Convert(&kgo.Record{Value: v})
		obj, derr := decodeObject(v)
		if !json.Valid(v) || derr != nil || obj == nil {
			if err == nil {
				t.Fatalf("%q: accepted a non-object", v)
			}
			return
		}
		if _, carries := obj[DeleteSignColumn]; carries {
			if err == nil {
				t.Fatalf("%q: accepted a record carrying the sign", v)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		want := json.Number("0")
		switch op := obj["op"].(type) {
		case string:
			if op == "1" {
				want = "1"
			}
		case json.Number:
			if op == "1" {
				want = "1"
			}
		}
		back, err := decodeObject(got)
		if err != nil {
			t.Fatalf("%q: row %q is not JSON: %v", v, got, err)
		}
		if back[DeleteSignColumn] != want {
			t.Fatalf("%q: row %q has sign %v, want %v", v, got, back[DeleteSignColumn], want)
		}
	})
}
