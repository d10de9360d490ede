package kafka

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func mustConverter(t testing.TB, cfg ConvertConfig) *Converter {
	t.Helper()
	c, err := NewConverter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rec(v string) *kgo.Record {
	return &kgo.Record{Topic: "orders", Partition: 2, Offset: 41, Value: []byte(v),
		Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)}
}

func TestConvertJSON(t *testing.T) {
	t.Parallel()
	c := mustConverter(t, ConvertConfig{Format: FormatJSON})
	for _, tc := range []struct{ in, want, err string }{
		{in: `{"id": 1, "v": "a b"}`, want: `{"id":1,"v":"a b"}`},
		{in: " \n{\n\"id\":1}\n", want: `{"id":1}`},
		{in: `{}`, want: `{}`},
		{in: `{"s":"line\nbreak"}`, want: `{"s":"line\nbreak"}`},
		{in: `[1,2]`, err: "array"},
		{in: `"x"`, err: "string"},
		{in: `{"id":1`, err: "invalid JSON"},
		{in: `{"id":1} {"id":2}`, err: "invalid JSON"},
		{in: ``, err: "empty"},
		{in: `nope`, err: "invalid JSON"},
	} {
		got, err := c.Convert(rec(tc.in))
		if tc.err != "" {
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.err)) {
				t.Errorf("%q: err %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := c.Convert(&kgo.Record{}); err == nil {
		t.Error("nil value: want an error")
	}
}

func TestConvertMetadataColumns(t *testing.T) {
	t.Parallel()
	meta := MetadataColumns{Topic: "_topic", Partition: "_partition", Offset: "_offset", Timestamp: "_ts"}
	c := mustConverter(t, ConvertConfig{Metadata: meta})
	got, err := c.Convert(rec(`{"id":1}`))
	want := `{"id":1,"_topic":"orders","_partition":2,"_offset":41,"_ts":1767323045006}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
	got, err = c.Convert(rec(`{}`))
	want = `{"_topic":"orders","_partition":2,"_offset":41,"_ts":1767323045006}`
	if err != nil || string(got) != want {
		t.Fatalf("empty object: got %s, %v; want %s", got, err, want)
	}
	meta.TimestampFormat = TimestampDatetime
	meta.Topic, meta.Partition = "", ""
	c = mustConverter(t, ConvertConfig{Metadata: meta})
	got, err = c.Convert(rec(`{"id":1}`))
	want = `{"id":1,"_offset":41,"_ts":"2026-01-02 03:04:05.006"}`
	if err != nil || string(got) != want {
		t.Fatalf("datetime: got %s, %v; want %s", got, err, want)
	}
	if _, err := NewConverter(ConvertConfig{Format: FormatCSV, Metadata: meta}); err == nil {
		t.Error("csv with metadata columns: want a config error")
	}
}

func TestConvertCSV(t *testing.T) {
	t.Parallel()
	c := mustConverter(t, ConvertConfig{Format: FormatCSV})
	for _, tc := range []struct{ in, want string }{
		{"1,a,b", "1,a,b"}, {"1,a\n", "1,a"}, {"1,a\r\n", "1,a"},
	} {
		got, err := c.Convert(rec(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"1,a\n2,b", "1\r2", "", "\n"} {
		if _, err := c.Convert(rec(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestConvertDebezium(t *testing.T) {
	t.Parallel()
	c := mustConverter(t, ConvertConfig{Format: FormatDebezium, Metadata: MetadataColumns{Offset: "off"}})
	for _, tc := range []struct{ in, want, err string }{
		{in: `{"before":null,"after":{"id":1,"v":"a"},"op":"c","ts_ms":1}`, want: `{"id":1,"v":"a","__DORIS_DELETE_SIGN__":0,"off":41}`},
		{in: `{"op":"u","before":{"id":1,"v":"a"},"after":{"id":1, "v":"b"}}`, want: `{"id":1,"v":"b","__DORIS_DELETE_SIGN__":0,"off":41}`},
		{in: `{"op":"r","after":{"id":3}}`, want: `{"id":3,"__DORIS_DELETE_SIGN__":0,"off":41}`},
		{in: `{"op":"d","before":{"id":1,"v":"b"},"after":null}`, want: `{"id":1,"v":"b","__DORIS_DELETE_SIGN__":1,"off":41}`},
		{in: `{"schema":{"type":"struct","fields":[{"op":"x"}]},"payload":{"op":"d","before":{"id":9}}}`, want: `{"id":9,"__DORIS_DELETE_SIGN__":1,"off":41}`},
		{in: `{"payload":{"after":{"k":"}{\""},"op":"c"}}`, want: `{"k":"}{\"","__DORIS_DELETE_SIGN__":0,"off":41}`},
		{in: `{"\u006fp":"c","after":{}}`, want: `{"__DORIS_DELETE_SIGN__":0,"off":41}`},
		{in: `{"op":"d","before":null}`, err: `without a "before" image`},
		{in: `{"op":"c"}`, err: `without a "after" image`},
		{in: `{"op":"t"}`, err: `not supported`},
		{in: `{"after":{"id":1}}`, err: `no "op"`},
		{in: `{"op":"c","after":[1]}`, err: `array`},
		{in: `{"op":"c","after":{"id":1}`, err: `invalid JSON`},
		{in: `[]`, err: `array`},
	} {
		got, err := c.Convert(rec(tc.in))
		if tc.err != "" {
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.err)) {
				t.Errorf("%s: err %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := c.Convert(&kgo.Record{}); !errors.Is(err, ErrTombstone) {
		t.Errorf("tombstone: err %v, want ErrTombstone", err)
	}
}

// FuzzConvertJSON: the converter accepts exactly the values encoding/json
// finds valid and that are objects, and its output is their compact form
// (one line), which decodes to the same value.
func FuzzConvertJSON(f *testing.F) {
	for _, s := range []string{`{"id":1,"v":"x"}`, ` { "a" : [1, 2, {"b": null}] } `, `{}`, `[1]`, `{"a":"\u00e9\n"}`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	c := mustConverter(f, ConvertConfig{Format: FormatJSON, Metadata: MetadataColumns{Partition: "p"}})
	f.Fuzz(func(t *testing.T, v []byte) {
		got, err := c.Convert(&kgo.Record{Partition: 7, Value: v})
		obj, derr := decodeObject(v)
		isObj := json.Valid(v) && derr == nil && obj != nil
		if isObj != (err == nil) {
			t.Fatalf("%q: accepted=%v (err %v), object=%v", v, err == nil, err, isObj)
		}
		if err != nil {
			return
		}
		if bytes.ContainsAny(got, "\n\r") {
			t.Fatalf("%q: row %q spans lines", v, got)
		}
		back, err := decodeObject(got)
		if err != nil {
			t.Fatalf("%q: row %q is not JSON: %v", v, got, err)
		}
		if back["p"] != json.Number("7") {
			t.Fatalf("%q: row %q lacks the partition column", v, got)
		}
		if _, dup := obj["p"]; !dup && len(back) != len(obj)+1 {
			t.Fatalf("%q: row %q has %d keys, want %d", v, got, len(back), len(obj)+1)
		}
	})
}

// FuzzConvertDebezium: whatever the input, the converter does not panic; a
// row it produces is one compact JSON object carrying the delete sign that
// matches the op, and it agrees with a reference decode by encoding/json.
func FuzzConvertDebezium(f *testing.F) {
	for _, s := range []string{
		`{"op":"c","after":{"id":1}}`, `{"op":"d","before":{"id":1},"after":null}`,
		`{"schema":{},"payload":{"op":"u","before":{"id":1},"after":{"id":1,"v":"x"}}}`,
		`{"op":"t"}`, `{"op":"c","after":{"s":"\"}"}}`, `{"op":1}`, `{"op":"c","after":null}`,
	} {
		f.Add([]byte(s))
	}
	c := mustConverter(f, ConvertConfig{Format: FormatDebezium})
	f.Fuzz(func(t *testing.T, v []byte) {
		got, err := c.Convert(&kgo.Record{Value: v})
		want, wantOK := referenceDebezium(v)
		if (err == nil) != wantOK {
			t.Fatalf("%q: accepted=%v (err %v), reference accepts=%v", v, err == nil, err, wantOK)
		}
		if err != nil {
			return
		}
		if bytes.ContainsAny(got, "\n\r") {
			t.Fatalf("%q: row %q spans lines", v, got)
		}
		back, err := decodeObject(got)
		if err != nil {
			t.Fatalf("%q: row %q is not JSON: %v", v, got, err)
		}
		if back[DeleteSignColumn] != want[DeleteSignColumn] {
			t.Fatalf("%q: delete sign %v, want %v", v, back[DeleteSignColumn], want[DeleteSignColumn])
		}
	})
}

// decodeObject decodes one JSON object keeping numbers exact (a valid
// 1e400 does not fit a float64).
func decodeObject(b []byte) (map[string]any, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return obj, nil
}

// referenceDebezium decodes v with encoding/json the slow way (keys
// matched exactly: Debezium's field names are lower case).
func referenceDebezium(v []byte) (map[string]any, bool) {
	if v == nil || !json.Valid(v) {
		return nil, false
	}
	var e map[string]json.RawMessage
	if json.Unmarshal(v, &e) != nil || e == nil {
		return nil, false
	}
	if _, ok := e["op"]; !ok && e["payload"] != nil {
		var inner map[string]json.RawMessage
		if json.Unmarshal(e["payload"], &inner) != nil || inner == nil {
			return nil, false
		}
		e = inner
	}
	var op string
	if json.Unmarshal(e["op"], &op) != nil {
		return nil, false
	}
	var image json.RawMessage
	sign := json.Number("0")
	switch op {
	case "c", "u", "r":
		image = e["after"]
	case "d":
		image, sign = e["before"], json.Number("1")
	default:
		return nil, false
	}
	obj, err := decodeObject(image)
	if image == nil || err != nil || obj == nil {
		return nil, false
	}
	obj[DeleteSignColumn] = sign
	return obj, true
}

func BenchmarkConvertJSON(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatJSON,
		Metadata: MetadataColumns{Topic: "_topic", Partition: "_partition", Offset: "_offset", Timestamp: "_ts"}})
	r := rec(`{"id": 123456, "customer": "c-42", "amount": 99.5, "items": [{"sku": "a", "n": 2}], "note": "hello \"world\""}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConvertDebezium(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatDebezium})
	r := rec(`{"schema":{"type":"struct"},"payload":{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u","ts_ms":1}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
}
