package kafka

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 11: JSON fields the table lacks vanished silently (Doris ignores a
// key that matches no column, new_json_reader.cpp). They are counted, and
// each name reported once; nested keys, escaped keys, metadata columns and
// the delete sign are not counted.
func TestWatchFieldsCountsFieldsTheTableLacks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cfg    ConvertConfig
		values []string
		count  int64
		named  []string
	}{
		{"json", ConvertConfig{Format: FormatJSON}, []string{
			`{"id":1,"v":"a","extra":2}`,
			`{ "id" : 2 , "nested" : {"id":1,"deep":[{"x":1}]}, "extra" : "s,}" }`,
			`{"id":3,"ID":4}`, // Doris matches names exactly: ID is not id
			`{"id":4,"v":"b"}`,
			`{"id":5,"e\u0078tra":1}`, // escaped key: not checked
			`{"id":6,"v":"c","":1}`,   // an empty name is no column either
			`{"v":"d","id":7}`,        // known keys in another order
		}, 5, []string{"extra", "nested", "ID", ""}},
		{"metadata columns are known", ConvertConfig{Format: FormatJSON, Metadata: MetadataColumns{Offset: "kafka_offset"}},
			[]string{`{"id":1,"v":"a"}`}, 0, nil},
		{"debezium image and delete sign", ConvertConfig{Format: FormatDebezium}, []string{
			`{"op":"c","after":{"id":1,"v":"a","gone":true},"source":{"db":"x"}}`,
			`{"op":"d","before":{"id":1,"v":"a"}}`,
		}, 1, []string{"gone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mustConverter(t, tc.cfg)
			var n atomic.Int64
			var named []string
			c.WatchFields([]string{"id", "v"}, &n, func(f string) { named = append(named, f) })
			for _, v := range tc.values {
				if _, err := c.Convert(&kgo.Record{Topic: "t", Value: []byte(v)}); err != nil {
					t.Fatalf("convert %s: %v", v, err)
				}
			}
			if n.Load() != tc.count || !slices.Equal(named, tc.named) {
				t.Errorf("counted %d, named %q; want %d, %q", n.Load(), named, tc.count, tc.named)
			}
		})
	}
}

// Names are reported for at most maxNamedFields distinct fields; all are
// counted. Without WatchFields nothing is checked.
func TestWatchFieldsBoundsNames(t *testing.T) {
	t.Parallel()
	c := mustConverter(t, ConvertConfig{Format: FormatJSON})
	var n atomic.Int64
	named := 0
	c.WatchFields([]string{"id"}, &n, func(string) { named++ })
	for i := range 2 * maxNamedFields {
		v := []byte(`{"id":1,"f` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1}`)
		if _, err := c.Convert(&kgo.Record{Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 2*maxNamedFields || named != maxNamedFields {
		t.Errorf("counted %d named %d, want %d and %d", n.Load(), named, 2*maxNamedFields, maxNamedFields)
	}
	off := mustConverter(t, ConvertConfig{Format: FormatJSON})
	if off.watch != nil {
		t.Error("watching without WatchFields")
	}
}

// skipStringFast agrees with skipString on escaped quotes and backslashes.
func TestSkipStringFast(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`"a"x`, `"a\"b"x`, `"a\\"x`, `"a\\\"b"x`, `""x`, `"\\\\"x`, `"abc`} {
		if got, want := skipStringFast([]byte(s), 0), skipString([]byte(s), 0); got != want {
			t.Errorf("skipStringFast(%s) = %d, skipString %d", s, got, want)
		}
	}
}

// Review P7: WatchFields appended the delete sign and the metadata
// columns to the caller's columns slice, writing into its spare capacity
// (the caller's backing array) when it had some.
func TestWatchFieldsLeavesCallersSlice(t *testing.T) {
	t.Parallel()
	backing := []string{"id", "v", "mine", "mine", "mine", "mine", "mine", "mine"}
	columns := backing[:2]
	c, err := NewConverter(ConvertConfig{Format: FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	c.WatchFields(columns, &n, nil)
	if want := []string{"id", "v", "mine", "mine", "mine", "mine", "mine", "mine"}; !slices.Equal(backing, want) {
		t.Fatalf("caller's backing array %q, want it unchanged %q", backing, want)
	}
}
