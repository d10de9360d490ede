package avrorow

import (
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Schema {
	t.Helper()
	p, err := Parse(s, nil)
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return p
}

// TestParseNames follows the specification's namespace rules: a dotted
// name is full, a plain one takes the namespace key or the enclosing
// namespace, and references resolve in the enclosing namespace, then the
// null namespace.
func TestParseNames(t *testing.T) {
	t.Parallel()
	inner := func(ref string) string {
		return `{"type":"record","name":"R","namespace":"a.b","fields":[
		{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}},
		{"name":"e2","type":"E"},{"name":"e3","type":"a.b.E"},
		{"name":"f","type":{"type":"fixed","name":"c.F","size":2}},{"name":"f2","type":"c.F"},
		{"name":"o","type":{"type":"record","name":"O","namespace":"z","fields":[{"name":"in","type":"` + ref + `"}]}}]}`
	}
	s := mustParse(t, inner("a.b.E"))
	if s.root.name != "a.b.R" || s.root.fields[3].n.name != "c.F" || s.root.fields[5].n.name != "z.O" {
		t.Fatalf("names %s %s %s", s.root.name, s.root.fields[3].n.name, s.root.fields[5].n.name)
	}
	// Inside namespace z, a plain E is z.E (or E in the null namespace):
	// not a.b.E.
	if _, err := Parse(inner("E"), nil); err == nil {
		t.Fatal("a plain name resolved outside its enclosing namespace")
	}
}

func TestParseRefusals(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`{"type":"record","name":"R","fields":[{"name":"a","type":"Nope"}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]}`,
		`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"enum","name":"R","symbols":[]}}]}`,
		`{"type":"record","fields":[]}`, `{"type":"fixed","name":"F"}`, `[["int"]]`, `{"type":"enum","name":"E"}`,
		`{"name":"x"}`, `not json`, `{"type":"int"} extra`, `{"type":"record","name":"int","fields":[]}`,
	} {
		if _, err := Parse(bad, nil); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}

// A logical type on the wrong base type or with bad parameters reads as
// its base type (the specification: "must be ignored").
func TestParseIgnoresInvalidLogicalTypes(t *testing.T) {
	t.Parallel()
	schema := record(`{"name":"d","type":{"type":"long","logicalType":"date"}},
		{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":2,"scale":3}},
		{"name":"u","type":{"type":"string","logicalType":"nope"}}`)
	got := decode(t, schema, []byte{2, 2, 0xff, 2, 'x'}, Options{})
	if want := `{"d":1,"dec":"/w==","u":"x"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestCanRead(t *testing.T) {
	t.Parallel()
	rec := func(fields string) string {
		return `{"type":"record","name":"R","namespace":"n1","fields":[` + fields + `]}`
	}
	for _, tc := range []struct {
		name, reader, writer string
		ok                   bool
	}{
		{"same", rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"int"}`), true},
		{"added with default", rec(`{"name":"a","type":"int"},{"name":"b","type":"string","default":""}`), rec(`{"name":"a","type":"int"}`), true},
		{"added without default", rec(`{"name":"a","type":"int"},{"name":"b","type":"string"}`), rec(`{"name":"a","type":"int"}`), false},
		{"removed field", rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"int"},{"name":"b","type":"string"}`), true},
		{"int to long", rec(`{"name":"a","type":"long"}`), rec(`{"name":"a","type":"int"}`), true},
		{"long to int", rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"long"}`), false},
		{"float to double", rec(`{"name":"a","type":"double"}`), rec(`{"name":"a","type":"float"}`), true},
		{"string to bytes", rec(`{"name":"a","type":"bytes"}`), rec(`{"name":"a","type":"string"}`), true},
		{"into union", rec(`{"name":"a","type":["null","long"]}`), rec(`{"name":"a","type":"int"}`), true},
		{"union to plain", rec(`{"name":"a","type":"long"}`), rec(`{"name":"a","type":["null","long"]}`), false},
		{"union subset", rec(`{"name":"a","type":["null","string","long"]}`), rec(`{"name":"a","type":["long","null"]}`), true},
		{"enum new symbol", rec(`{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}}`), rec(`{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}}`), false},
		{"enum default", rec(`{"name":"e","type":{"type":"enum","name":"E","symbols":["A"],"default":"A"}}`), rec(`{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}}`), true},
		{"fixed size", rec(`{"name":"f","type":{"type":"fixed","name":"F","size":4}}`), rec(`{"name":"f","type":{"type":"fixed","name":"F","size":8}}`), false},
		{"record renamed", `{"type":"record","name":"Other","fields":[]}`, rec(``), false},
		{"namespace differs", `{"type":"record","name":"R","namespace":"n2","fields":[]}`, rec(``), true},
		{"nested", rec(`{"name":"i","type":{"type":"record","name":"I","fields":[{"name":"x","type":"int"},{"name":"y","type":"int"}]}}`),
			rec(`{"name":"i","type":{"type":"record","name":"I","fields":[{"name":"x","type":"int"}]}}`), false},
		{"array items", rec(`{"name":"a","type":{"type":"array","items":"long"}}`), rec(`{"name":"a","type":{"type":"array","items":"int"}}`), true},
		{"map values", rec(`{"name":"m","type":{"type":"map","values":"int"}}`), rec(`{"name":"m","type":{"type":"map","values":"string"}}`), false},
		{"recursive", `{"type":"record","name":"L","fields":[{"name":"v","type":"long"},{"name":"next","type":["null","L"]}]}`,
			`{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}`, true},
		{"logical follows base", rec(`{"name":"t","type":{"type":"long","logicalType":"timestamp-micros"}}`), rec(`{"name":"t","type":"long"}`), true},
	} {
		err := mustParse(t, tc.reader).CanRead(mustParse(t, tc.writer))
		if (err == nil) != tc.ok {
			t.Errorf("%s: CanRead = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), " ") {
			t.Errorf("%s: error %q says nothing", tc.name, err)
		}
	}
}
