package kafka

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
)

// compactCases are inputs on both sides of isCompactObject's fast path.
var compactCases = []string{
	`{}`, `{"a":1}`, `{"a":-0.5e+10,"b":[1,2,{"c":null}],"d":true,"e":false}`,
	`{"s":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00 é"}`, `{"a":[]}`, `{"a":{}}`, `{"n":0,"m":-0,"x":1E5,"y":2.0e-3}`,
	// Not compact or not valid: the slow path decides.
	` {}`, `{} `, `{"a": 1}`, "{\"a\":1}\n", `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`,
	`{"a":tru}`, `{"a":nul}`, `{"a":"x}`, `{"a":"\x"}`, `{"a":"\u12G4"}`, "{\"a\":\"\x01\"}", `{"a":1,}`,
	`{,}`, `{"a"}`, `{"a":}`, `{"a":1}{}`, `[1]`, `"s"`, `{"a":[1,]}`, `{"a":[1 2]}`, `{1:2}`, `{"a":1`, `{`,
	strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001),
}

// TestIsCompactObjectMatchesCompact: the fast path says yes only when
// json.Compact would return the input unchanged without error.
func TestIsCompactObjectMatchesCompact(t *testing.T) {
	t.Parallel()
	for _, in := range compactCases {
		checkCompact(t, []byte(in))
	}
}

func checkCompact(t *testing.T, in []byte) {
	t.Helper()
	var buf bytes.Buffer
	err := json.Compact(&buf, in)
	want := err == nil && bytes.Equal(buf.Bytes(), in) && len(in) > 0 && in[0] == '{'
	if got := isCompactObject(in); got != want {
		t.Errorf("isCompactObject(%.60q) = %v, want %v (json.Compact err %v)", in, got, want, err)
	}
}

func FuzzIsCompactObject(f *testing.F) {
	for _, in := range append(compactCases, longStringCases()...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkCompact(t, in) })
}

// benchJSON1K is a compact 1 KiB JSON record like the bench command's.
var benchJSON1K = func() []byte {
	b := []byte(`{"id":123456,"ts":1760000123456,"customer":"c-456","amount":23456.25,"note":"`)
	for len(b) < 1022 {
		b = append(b, "0123456789abcdef"[len(b)%16])
	}
	return append(b, `"}`...)
}()

// BenchmarkConvertJSONCompact1K is the hot path of kafka.format json
// without metadata columns: a compact 1 KiB object (validated, not
// copied).
func BenchmarkConvertJSONCompact1K(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatJSON})
	r := rec(string(benchJSON1K))
	b.ReportAllocs()
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONCompactStdlib1K is what the fast path replaces.
func BenchmarkJSONCompactStdlib1K(b *testing.B) {
	var buf bytes.Buffer
	b.ReportAllocs()
	b.SetBytes(int64(len(benchJSON1K)))
	for b.Loop() {
		buf.Reset()
		if err := json.Compact(&buf, benchJSON1K); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertCSV100 is the hot path of kafka.format csv.
func BenchmarkConvertCSV100(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatCSV})
	r := rec(strings.Repeat("1234567,abc,", 8) + "1234")
	b.ReportAllocs()
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertJSONCompact1KWatched is the same hot path with the
// table's columns watched (WithTableColumns), one field unknown: it must
// stay allocation-free.
func BenchmarkConvertJSONCompact1KWatched(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatJSON})
	var n atomic.Int64
	c.WatchFields([]string{"id", "ts", "customer", "amount"}, &n, func(string) {})
	r := rec(string(benchJSON1K))
	b.ReportAllocs()
	b.SetBytes(int64(len(r.Value)))
	for b.Loop() {
		if _, err := c.Convert(r); err != nil {
			b.Fatal(err)
		}
	}
	if n.Load() == 0 {
		b.Fatal("the unknown field was not counted")
	}
}

// BenchmarkWatchScan1K is the field watch alone on the 1 KiB record: the
// cost WithTableColumns adds per row.
func BenchmarkWatchScan1K(b *testing.B) {
	c := mustConverter(b, ConvertConfig{Format: FormatJSON})
	var n atomic.Int64
	c.WatchFields([]string{"id", "ts", "customer", "amount"}, &n, func(string) {})
	b.ReportAllocs()
	b.SetBytes(int64(len(benchJSON1K)))
	for b.Loop() {
		c.watch.scan(benchJSON1K)
	}
}
