package avrorow

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// encode writes v with schema using hamba/avro (the producer side).
func encode(t *testing.T, schema string, v any) []byte {
	t.Helper()
	s, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	b, err := avro.Marshal(s, v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

func decode(t *testing.T, schema string, payload []byte, opt Options) string {
	t.Helper()
	d, err := New(schema, nil, opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	out, err := d.AppendJSON(nil, payload)
	if err != nil {
		t.Fatalf("AppendJSON: %v", err)
	}
	if !json.Valid(out) {
		t.Fatalf("invalid JSON %s", out)
	}
	return string(out)
}

func record(fields string) string {
	return `{"type":"record","name":"R","namespace":"t","fields":[` + fields + `]}`
}

func TestPrimitives(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"n","type":"null"},{"name":"b","type":"boolean"},{"name":"i","type":"int"},
		{"name":"l","type":"long"},{"name":"f","type":"float"},{"name":"d","type":"double"},
		{"name":"s","type":"string"},{"name":"by","type":"bytes"},
		{"name":"fx","type":{"type":"fixed","name":"F4","size":4}}`)
	p := encode(t, schema, map[string]any{"n": nil, "b": true, "i": int32(-7), "l": int64(math.MaxInt64),
		"f": float32(1.5), "d": 2.25e-9, "s": "a\"b\\c\n\x01é", "by": []byte{0, 1, 255}, "fx": [4]byte{'a', 'b', 'c', 'd'}})
	got := decode(t, schema, p, Options{})
	want := `{"n":null,"b":true,"i":-7,"l":9223372036854775807,"f":1.5,"d":2.25e-09,"s":"a\"b\\c\n\u0001é","by":"AAH/","fx":"YWJjZA=="}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestComplexTypes(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
		{"name":"a","type":{"type":"array","items":"int"}},
		{"name":"m","type":{"type":"map","values":"string"}},
		{"name":"nested","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"long"},{"name":"y","type":["null","string"]}]}},
		{"name":"opt","type":["null","long"],"default":null},
		{"name":"multi","type":["null","string","long"]}`)
	p := encode(t, schema, map[string]any{"e": "GREEN", "a": []int32{1, 2, 3}, "m": map[string]any{"k": "v"},
		"nested": map[string]any{"x": int64(5), "y": nil}, "opt": int64(9), "multi": map[string]any{"long": int64(4)}})
	got := decode(t, schema, p, Options{})
	want := `{"e":"GREEN","a":[1,2,3],"m":{"k":"v"},"nested":{"x":5,"y":null},"opt":9,"multi":4}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestBlocksWithByteSize decodes array and map blocks written with a
// negative count and a byte size (the Avro spec allows it; hamba writes
// positive counts only).
func TestBlocksWithByteSize(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"a","type":{"type":"array","items":"int"}},{"name":"m","type":{"type":"map","values":"int"}}`)
	// a: block of -2 items, 2 bytes: 1, 2; then a block of 1: 3; then 0.
	// m: block of -1 item, 3 bytes: "k" → 4; then 0.
	p := []byte{3, 4, 2, 4, 2, 6, 0, 1, 6, 2, 'k', 8, 0}
	got := decode(t, schema, p, Options{})
	if want := `{"a":[1,2,3],"m":{"k":4}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestRecursiveRecord(t *testing.T) {
	t.Parallel()
	schema := `{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}`
	p := encode(t, schema, map[string]any{"v": int32(1), "next": map[string]any{"Node": map[string]any{"v": int32(2), "next": nil}}})
	if got, want := decode(t, schema, p, Options{}), `{"v":1,"next":{"v":2,"next":null}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestDecimal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ  string
		val  string
		want string
	}{
		{`{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}`, "-12.3", `"-12.30"`},
		{`{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}`, "0.05", `"0.05"`},
		{`{"type":"bytes","logicalType":"decimal","precision":10,"scale":0}`, "42", `"42"`},
		{`{"type":"bytes","logicalType":"decimal","precision":5,"scale":5}`, "-0.00001", `"-0.00001"`},
		{`{"type":"bytes","logicalType":"decimal","precision":38,"scale":4}`, "12345678901234567890123456789012.3456", `"12345678901234567890123456789012.3456"`},
		{`{"type":"fixed","name":"D","size":16,"logicalType":"decimal","precision":38,"scale":9}`, "-98765432109876543210.123456789", `"-98765432109876543210.123456789"`},
		{`{"type":"fixed","name":"D8","size":8,"logicalType":"decimal","precision":18,"scale":3}`, "-922337203685477.580", `"-922337203685477.580"`},
	} {
		schema := record(`{"name":"x","type":` + tc.typ + `}`)
		r, ok := new(big.Rat).SetString(tc.val)
		if !ok {
			t.Fatal(tc.val)
		}
		got := decode(t, schema, encode(t, schema, map[string]any{"x": r}), Options{})
		if want := `{"x":` + tc.want + `}`; got != want {
			t.Errorf("%s %s: got %s, want %s", tc.typ, tc.val, got, want)
		}
	}
}

func TestDecimalBeyondPrecisionRefused(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"x","type":{"type":"bytes","logicalType":"decimal","precision":3,"scale":1}}`)
	// 12345 (unscaled) = 0x3039: five digits, precision 3.
	d, err := New(schema, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.AppendJSON(nil, []byte{4, 0x30, 0x39})
	var de *DecodeError
	if !errors.As(err, &de) || de.Path != "x" || de.Offset != 0 {
		t.Fatalf("err = %v, want a DecodeError at x, byte 0", err)
	}
}

func TestTemporal(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"d","type":{"type":"int","logicalType":"date"}},
		{"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
		{"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
		{"name":"tsm","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
		{"name":"ltm","type":{"type":"long","logicalType":"local-timestamp-millis"}},
		{"name":"ltu","type":{"type":"long","logicalType":"local-timestamp-micros"}},
		{"name":"u","type":{"type":"string","logicalType":"uuid"}},
		{"name":"dur","type":{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}}`)
	ts := time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC)
	v := map[string]any{
		"d": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "tm": 13*time.Hour + 5*time.Minute + 7*time.Second + 89*time.Millisecond,
		"tu":  13*time.Hour + 5*time.Minute + 7*time.Second + 891011*time.Microsecond,
		"tsm": ts, "tsu": ts, "ltm": ts, "ltu": ts, "u": "123e4567-e89b-12d3-a456-426614174000",
		"dur": avro.LogicalDuration{Months: 1, Days: 2, Milliseconds: 3},
	}
	p := encode(t, schema, v)
	got := decode(t, schema, p, Options{})
	want := `{"d":"2024-02-29","tm":"13:05:07.089","tu":"13:05:07.891011","tsm":"2024-02-29 23:59:58.123000",` +
		`"tsu":"2024-02-29 23:59:58.123456","ltm":"2024-02-29 23:59:58.123000","ltu":"2024-02-29 23:59:58.123456",` +
		`"u":"123e4567-e89b-12d3-a456-426614174000","dur":{"months":1,"days":2,"millis":3}}`
	if got != want {
		t.Fatalf("UTC:\ngot  %s\nwant %s", got, want)
	}
	// In +08:00 the instants move to the next day; local timestamps and
	// dates do not move.
	got = decode(t, schema, p, Options{TimeZone: time.FixedZone("UTC+8", 8*3600)})
	want = strings.NewReplacer(`"tsm":"2024-02-29 23:59:58.123000"`, `"tsm":"2024-03-01 07:59:58.123000"`,
		`"tsu":"2024-02-29 23:59:58.123456"`, `"tsu":"2024-03-01 07:59:58.123456"`).Replace(want)
	if got != want {
		t.Fatalf("UTC+8:\ngot  %s\nwant %s", got, want)
	}
}

func TestPreEpochTimestamp(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},{"name":"d","type":{"type":"int","logicalType":"date"}}`)
	ts := time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)
	p := encode(t, schema, map[string]any{"ts": ts, "d": time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)})
	if got, want := decode(t, schema, p, Options{}), `{"ts":"1969-12-31 23:59:59.999999","d":"1900-01-01"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestInvalidUTF8Replaced(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"s","type":"string"}`)
	if got, want := decode(t, schema, []byte{6, 'a', 0xff, 'b'}, Options{}), `{"s":"a\ufffdb"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"a","type":"long"},{"name":"arr","type":{"type":"array","items":{"type":"record","name":"E","fields":[{"name":"s","type":"string"}]}}},
		{"name":"e","type":{"type":"enum","name":"En","symbols":["A"]}},{"name":"f","type":"double"}`)
	d, err := New(schema, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	nan := make([]byte, 8)
	bits := math.Float64bits(math.NaN())
	for i := range nan {
		nan[i] = byte(bits >> (8 * i))
	}
	for _, tc := range []struct {
		name    string
		payload []byte
		path    string
		offset  int
	}{
		{"short varint", []byte{0x80}, "a", 0},
		{"string too long", []byte{2, 2, 20, 'x', 0}, "arr[0].s", 2},
		{"enum index", []byte{2, 0, 2}, "e", 2},
		{"NaN", append([]byte{2, 0, 0}, nan...), "f", 3},
		{"trailing", append(append([]byte{2, 0, 0}, make([]byte, 8)...), 7), "", 11},
	} {
		dst := []byte("keep")
		out, err := d.AppendJSON(dst, tc.payload)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: err = %v, want a *DecodeError", tc.name, err)
			continue
		}
		if de.Path != tc.path || de.Offset != tc.offset {
			t.Errorf("%s: %v: path %q offset %d, want %q %d", tc.name, err, de.Path, de.Offset, tc.path, tc.offset)
		}
		if string(out) != "keep" {
			t.Errorf("%s: dst = %q, want it unchanged", tc.name, out)
		}
	}
}

func TestNonRecordSchemaRefused(t *testing.T) {
	t.Parallel()
	if _, err := New(`"string"`, nil, Options{}); err == nil {
		t.Fatal("a string schema was accepted as a row")
	}
}

// TestReferences compiles a schema whose field type is defined by a
// reference, itself referencing another (resolved transitively).
func TestReferences(t *testing.T) {
	t.Parallel()
	refs := map[string]string{
		"com.x.Address": `{"type":"record","name":"Address","namespace":"com.x","fields":[{"name":"city","type":"string"},{"name":"geo","type":"com.x.Geo"}]}`,
		"com.x.Geo":     `{"type":"record","name":"Geo","namespace":"com.x","fields":[{"name":"lat","type":"double"}]}`,
	}
	schema := `{"type":"record","name":"User","namespace":"com.x","fields":[{"name":"home","type":"com.x.Address"}]}`
	d, err := New(schema, refs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// "home": {"city": "Oslo", "geo": {"lat": 1.0}}
	p := append([]byte{8, 'O', 's', 'l', 'o'}, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f)
	out, err := d.AppendJSON(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"home":{"city":"Oslo","geo":{"lat":1}}}`; string(out) != want {
		t.Fatalf("got %s, want %s", out, want)
	}
}

// TestSchemaEvolution: a record written with v1 decodes with v1's decoder
// (the writer schema decides); a v2 record carries the added field.
func TestSchemaEvolution(t *testing.T) {
	t.Parallel()
	v1 := record(`{"name":"id","type":"long"}`)
	v2 := record(`{"name":"id","type":"long"},{"name":"email","type":"string","default":"none"}`)
	if got := decode(t, v1, encode(t, v1, map[string]any{"id": int64(1)}), Options{}); got != `{"id":1}` {
		t.Fatalf("v1: %s", got)
	}
	if got := decode(t, v2, encode(t, v2, map[string]any{"id": int64(2), "email": "a@b"}), Options{}); got != `{"id":2,"email":"a@b"}` {
		t.Fatalf("v2: %s", got)
	}
}
