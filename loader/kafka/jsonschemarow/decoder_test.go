package jsonschemarow

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestPassThroughCompacts: without date-time properties the row is the
// record, compacted.
func TestPassThroughCompacts(t *testing.T) {
	t.Parallel()
	d, err := New(`{"type":"object","properties":{"a":{"type":"integer"}}}`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.dt != nil {
		t.Fatal("a schema without date-time got a rewrite plan")
	}
	for in, want := range map[string]string{
		` { "a" : 1 , "b" : [ 1, 2 , {"c" : "x y"} ] }` + "\n": `{"a":1,"b":[1,2,{"c":"x y"}]}`,
		`{"a":"q\" \\ "}`: `{"a":"q\" \\ "}`,
		`{}`:              `{}`,
	} {
		if got := row(t, d, in); got != want {
			t.Errorf("%q → %s, want %s", in, got, want)
		}
	}
}

// TestRefusesNonObject: a row is one JSON object.
func TestRefusesNonObject(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{})
	for _, c := range []struct {
		in     string
		offset int
		want   string
	}{
		{`[1]`, 0, "JSON array, want an object"},
		{` "s"`, 1, "JSON string"},
		{`12`, 0, "JSON number"},
		{`null`, 0, "JSON null"},
		{``, 0, "empty payload"},
		{`{"a":}`, 5, "invalid JSON"},
		{`{"a":1}{}`, 7, "invalid JSON"},
	} {
		out, err := d.AppendJSON([]byte("x"), []byte(c.in))
		var de *DecodeError
		if !errors.As(err, &de) || de.Offset != c.offset || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a DecodeError at byte %d containing %q", c.in, err, c.offset, c.want)
		}
		if string(out) != "x" {
			t.Errorf("%q: dst changed to %q", c.in, out)
		}
	}
}

// TestValidate: with Validate a record that does not match is an error
// carrying the validator's *jsonschema.ValidationError; without it the
// record passes (the Confluent deserializer's default).
func TestValidate(t *testing.T) {
	t.Parallel()
	on := newOrderDecoder(t, Options{Validate: true})
	off := newOrderDecoder(t, Options{})
	if got := row(t, on, `{"id":1,"customer":{"name":"ada"}}`); got != `{"id":1,"customer":{"name":"ada"}}` {
		t.Errorf("valid record: %s", got)
	}
	for _, bad := range []string{
		`{"id":"one"}`,                      // wrong type
		`{"note":"x"}`,                      // required id missing
		`{"id":1,"customer":{"since":"x"}}`, // required in the referenced schema
		`{"id":1,"lines":[{"sku":5}]}`,      // through a local $ref
	} {
		_, err := on.AppendJSON(nil, encode(t, bad))
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a ValidationError", bad, err)
		}
		if _, err := off.AppendJSON(nil, encode(t, bad)); err != nil {
			t.Errorf("%s without Validate: %v", bad, err)
		}
	}
}

// TestReferences: refs resolve by name for validation and for date-time
// rewriting; a missing one fails New when validating.
func TestReferences(t *testing.T) {
	t.Parallel()
	if _, err := New(readTestdata(t, "order.json"), nil, Options{Validate: true}); err == nil ||
		!strings.Contains(err.Error(), "customer.json") {
		t.Errorf("missing reference: %v", err)
	}
	if _, err := New(`{"type":`, nil, Options{}); err == nil {
		t.Error("invalid schema JSON accepted")
	}
	// An absolute $id: the reference is found by its name's tail.
	d, err := New(`{"$id":"https://example.com/s/order.json","properties":{"c":{"$ref":"customer.json"}}}`,
		map[string]string{"customer.json": readTestdata(t, "customer.json")}, Options{Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := row(t, d, `{"c":{"name":"n","since":"2024-01-01T00:00:00Z"}}`); got != `{"c":{"name":"n","since":"2024-01-01 00:00:00.000000"}}` {
		t.Errorf("row %s", got)
	}
}

// TestDateTime: date-time strings become DATETIME(6) text in TimeZone,
// wherever the schema declares them.
func TestDateTime(t *testing.T) {
	t.Parallel()
	utc := newOrderDecoder(t, Options{})
	for _, c := range []struct{ name, in, want string }{
		{"top level", `{"at":"2024-02-29T23:59:58.1234567Z"}`, `{"at":"2024-02-29 23:59:58.123456"}`},
		{"offset", `{"at":"2024-03-01T01:00:00+02:00"}`, `{"at":"2024-02-29 23:00:00.000000"}`},
		{"lower case t and z (RFC 3339 §5.6)", `{"at":"2024-03-01t01:00:00.5z"}`, `{"at":"2024-03-01 01:00:00.500000"}`},
		{"nullable oneOf", `{"shipped_at":"2024-01-01T00:00:00Z"}`, `{"shipped_at":"2024-01-01 00:00:00.000000"}`},
		{"nullable null", `{"shipped_at":null}`, `{"shipped_at":null}`},
		{"referenced doc", `{"customer":{"name":"a","since":"2020-05-06T07:08:09Z"}}`, `{"customer":{"name":"a","since":"2020-05-06 07:08:09.000000"}}`},
		{"array items via local ref", `{"lines":[{"sku":"s","packed_at":"2021-01-01T00:00:00Z"}]}`, `{"lines":[{"sku":"s","packed_at":"2021-01-01 00:00:00.000000"}]}`},
		{"recursive", `{"lines":[{"children":[{"packed_at":"2021-01-01T00:00:00Z"}]}]}`, `{"lines":[{"children":[{"packed_at":"2021-01-01 00:00:00.000000"}]}]}`},
		{"additionalProperties", `{"labels":{"x":"2022-02-02T02:02:02Z"}}`, `{"labels":{"x":"2022-02-02 02:02:02.000000"}}`},
		{"not a date-time: unchanged", `{"at":"yesterday"}`, `{"at":"yesterday"}`},
		{"undeclared: unchanged", `{"note":"2024-01-01T00:00:00Z"}`, `{"note":"2024-01-01T00:00:00Z"}`},
		{"other values compacted", `{ "id" : 1, "at" : "2024-01-01T00:00:00Z", "x": [ 1 , {"a": "b"} ] }`, `{"id":1,"at":"2024-01-01 00:00:00.000000","x":[1,{"a":"b"}]}`},
	} {
		if got := row(t, utc, c.in); got != c.want {
			t.Errorf("%s: %s → %s, want %s", c.name, c.in, got, c.want)
		}
	}
	cst := newOrderDecoder(t, Options{TimeZone: time.FixedZone("UTC+8", 8*3600)})
	if got := row(t, cst, `{"at":"2024-02-29T23:59:58Z"}`); got != `{"at":"2024-03-01 07:59:58.000000"}` {
		t.Errorf("time zone: %s", got)
	}
	keep := newOrderDecoder(t, Options{KeepDateTime: true})
	if got := row(t, keep, `{"at":"2024-02-29T23:59:58Z"}`); got != `{"at":"2024-02-29T23:59:58Z"}` {
		t.Errorf("KeepDateTime: %s", got)
	}
	_, err := utc.AppendJSON(nil, []byte(`{"at":"0000-01-01T00:00:00+01:00"}`))
	var de *DecodeError
	if !errors.As(err, &de) || de.Offset != 6 {
		t.Errorf("year -1: %v", err)
	}
}

// TestPassThroughAllocs: without validation or date-time rewriting a
// record costs no allocation.
func TestPassThroughAllocs(t *testing.T) {
	d, err := New(`{"type":"object"}`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	payload := encode(t, `{"id":1, "note":"text"}`)
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() {
		if buf, err = d.AppendJSON(buf[:0], payload); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("AppendJSON allocates %.1f times per record, want 0", n)
	}
}

// TestConcurrentAppendJSON: one Decoder serves many goroutines (run with
// -race), validating and rewriting.
func TestConcurrentAppendJSON(t *testing.T) {
	t.Parallel()
	d := newOrderDecoder(t, Options{Validate: true})
	payload := encode(t, `{"id":1,"at":"2024-01-01T00:00:00Z","lines":[{"packed_at":"2024-01-01T00:00:00+01:00"}]}`)
	want := row(t, d, string(payload))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var buf []byte
			for range 100 {
				var err error
				if buf, err = d.AppendJSON(buf[:0], payload); err != nil || string(buf) != want {
					t.Errorf("got %s, %v", buf, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
