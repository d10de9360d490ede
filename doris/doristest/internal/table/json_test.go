package table

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// docs/doris-facts.md §1.4: read_json_by_line, strip_outer_array, jsonpaths,
// json_root; NULL from JSON null or a missing key.
func TestJSONParsing_Section1_4(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		h        []string
		body     string
		want     [][]any
		total    int64
		filtered int64
	}{
		{"by line default", nil, `{"k":1,"v":"a"}` + "\n" + `{"k":2,"v":"b"}`,
			[][]any{{int64(1), "a"}, {int64(2), "b"}}, 2, 0},
		{"by line custom delimiter", []string{"line_delimiter", "|"}, `{"k":1,"v":"a"}|{"k":2}`,
			[][]any{{int64(1), "a"}, {int64(2), nil}}, 2, 0},
		{"null and missing key", nil, `{"k":1,"v":null}` + "\n" + `{"k":2}`,
			[][]any{{int64(1), nil}, {int64(2), nil}}, 2, 0},
		{"keys case-insensitive fallback", nil, `{"K":1,"V":"a"}`, [][]any{{int64(1), "a"}}, 1, 0},
		{"number as string value", nil, `{"k":"7","v":8}`, [][]any{{int64(7), "8"}}, 1, 0},
		{"nested value to varchar", nil, `{"k":1,"v":{"a":[1, 2]}}`, [][]any{{int64(1), `{"a":[1, 2]}`}}, 1, 0},
		{"bool to varchar", nil, `{"k":1,"v":true}`, [][]any{{int64(1), "1"}}, 1, 0},
		{"malformed line filtered", nil, `{"k":1,"v":"a"}` + "\n" + `{"k":2,` + "\n",
			[][]any{{int64(1), "a"}}, 2, 1},
		{"all keys missing filtered", nil, `{"x":1}`, nil, 1, 1},
		{"array line without strip filtered", []string{"read_json_by_line", "true"}, `[{"k":1}]`, nil, 1, 1},
		{"array per line with strip", []string{"read_json_by_line", "true", "strip_outer_array", "true"},
			`[{"k":1},{"k":2}]` + "\n" + `[{"k":3}]`, [][]any{{int64(1), nil}, {int64(2), nil}, {int64(3), nil}}, 3, 0},
		{"whole body array", []string{"strip_outer_array", "true"}, ` [ {"k":1,"v":"a"}, {"k":2,"v":"b"} ] `,
			[][]any{{int64(1), "a"}, {int64(2), "b"}}, 2, 0},
		{"whole body array element not object", []string{"strip_outer_array", "true"}, `[{"k":1}, 5]`,
			[][]any{{int64(1), nil}}, 2, 1},
		{"whole body single object", []string{"read_json_by_line", "false"}, `{"k":1,"v":"a"}`,
			[][]any{{int64(1), "a"}}, 1, 0},
		{"object with strip filtered", []string{"strip_outer_array", "true"}, `{"k":1}`, nil, 1, 1},
		{"jsonpaths", []string{"jsonpaths", `["$.id", "$.data.name"]`}, `{"id":5,"data":{"name":"n"}}`,
			[][]any{{int64(5), "n"}}, 1, 0},
		{"jsonpaths with columns", []string{"jsonpaths", `["$.data.name", "$.id"]`, "columns", "v,k"},
			`{"id":5,"data":{"name":"n"}}`, [][]any{{int64(5), "n"}}, 1, 0},
		{"jsonpaths index", []string{"jsonpaths", `["$.a[1]", "$['b']"]`}, `{"a":[0,9],"b":"x"}`,
			[][]any{{int64(9), "x"}}, 1, 0},
		{"json_root", []string{"json_root", "$.data", "read_json_by_line", "true"}, `{"data":{"k":3,"v":"c"}}`,
			[][]any{{int64(3), "c"}}, 1, 0},
		{"json_root with array", []string{"json_root", "$.rows", "strip_outer_array", "true"},
			`{"rows":[{"k":3},{"k":4}]}`, [][]any{{int64(3), nil}, {int64(4), nil}}, 2, 0},
		{"json_root missing filtered", []string{"json_root", "$.nope"}, `{"k":1}`, nil, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tb := dupKV(t)
			b := commit(t, tb, hdr(append([]string{"format", "json"}, c.h...)...), c.body)
			counts(t, b, c.total, c.filtered, 0)
			if got := tb.Rows(); (len(got) != 0 || len(c.want) != 0) && !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rows %v, want %v", got, c.want)
			}
		})
	}
}

// A malformed whole-array body fails the load rather than filtering.
func TestJSONMalformedBodyFailsLoad(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`[{"k":1},`, `[{"k":1}] {"k":2}`, `[{"k":1} {"k":2}]`} {
		tb := dupKV(t)
		_, err := tryLoad(tb, hdr("format", "json", "strip_outer_array", "true"), body)
		var e *Error
		if !errors.As(err, &e) || e.Code != "DATA_QUALITY_ERROR" || !strings.HasPrefix(e.Msg, "Parse json data for JsonDoc failed") {
			t.Fatalf("body %q: err %v", body, err)
		}
	}
	tb := dupKV(t)
	if _, err := tryLoad(tb, hdr("format", "json", "jsonpaths", `not json`), `{}`); err == nil {
		t.Fatal("bad jsonpaths accepted")
	}
}

func TestJSONNotNullMissingKey(t *testing.T) {
	t.Parallel()
	tb := newTable(t, schema.DuplicateKeys, []string{"k"}, nil, col("k", "INT NOT NULL"), col("v", "INT"))
	b := load(t, tb, hdr("format", "json"), `{"v":1}`+"\n"+`{"k":1}`)
	counts(t, b, 2, 1, 0)
	if !strings.Contains(b.ErrorLines[0], "column(k) values is null while columns is not nullable") {
		t.Fatalf("reason %q", b.ErrorLines[0])
	}
}
