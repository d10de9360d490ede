package jsonschemarow

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// refChain is a schema whose property reaches a date-time string through
// n $refs in a chain (issue 25 item 9: compile time grows with n²).
func refChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"a":{"$ref":"#/definitions/d0"}},"definitions":{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"$ref":"#/definitions/d%d"},`, i, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string","format":"date-time"}}}`, n)
	return b.String()
}

// TestIssue25RefChainRefused: a schema past MaxSchemaRefs is refused
// before it is compiled (30,000 refs compiled for 6.2 s); one within the
// bound compiles and works.
func TestIssue25RefChainRefused(t *testing.T) {
	t.Parallel()
	for _, validate := range []bool{false, true} {
		if _, err := New(refChain(MaxSchemaRefs), nil, Options{Validate: validate}); !errors.Is(err, ErrSchemaTooComplex) {
			t.Fatalf("validate %v: err %v", validate, err)
		}
		// The count covers the references too.
		refs := map[string]string{"other.json": refChain(MaxSchemaRefs / 2)}
		if _, err := New(refChain(MaxSchemaRefs/2), refs, Options{Validate: validate}); !errors.Is(err, ErrSchemaTooComplex) {
			t.Fatalf("validate %v, with references: err %v", validate, err)
		}
	}
	d, err := New(refChain(50), nil, Options{Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.AppendJSON(nil, []byte(`{"a":"2024-01-02T03:04:05Z"}`))
	if err != nil || string(out) != `{"a":"2024-01-02 03:04:05.000000"}` {
		t.Fatalf("%s, %v", out, err)
	}
}

// TestSchemaDepthRefused: a schema document nested past MaxSchemaDepth is
// refused; a recursive schema (by $ref) is fine.
func TestSchemaDepthRefused(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, MaxSchemaDepth) + `{}` + strings.Repeat(`}}`, MaxSchemaDepth)
	if _, err := New(deep, nil, Options{}); !errors.Is(err, ErrSchemaTooComplex) {
		t.Fatalf("err %v", err)
	}
	rec := `{"type":"object","properties":{"n":{"$ref":"#"},"t":{"type":"string","format":"date-time"}}}`
	d, err := New(rec, nil, Options{Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AppendJSON(nil, []byte(`{"n":{"n":{"t":"2024-01-02T03:04:05Z"}}}`)); err != nil {
		t.Fatal(err)
	}
}

// TestRowBound: a row whose JSON passes MaxRowBytes is a DecodeError
// wrapping ErrRowTooBig.
func TestRowBound(t *testing.T) {
	t.Parallel()
	d, err := New(`{"type":"object"}`, nil, Options{MaxRowBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AppendJSON(nil, []byte(`{"a":"`+strings.Repeat("x", 100)+`"}`)); !errors.Is(err, ErrRowTooBig) {
		t.Fatalf("err %v", err)
	}
	if out, err := d.AppendJSON(make([]byte, 500), []byte(`{"a":"x"}`)); err != nil || string(out[500:]) != `{"a":"x"}` {
		t.Fatalf("%s, %v", out, err)
	}
}

// TestValidateDepthBound: with validation, a record nested deeper than
// MaxValidateDepth is a DecodeError (10,000 levels took 64 MiB of stack
// and 0.7 s in the validator); without validation the bound is
// encoding/json's 10,000; strings holding brackets do not count.
func TestValidateDepthBound(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"n":{"$ref":"#"}}}`
	nested := func(levels int) []byte {
		return []byte(strings.Repeat(`{"n":`, levels-1) + `{"s":"[[{\"{"}` + strings.Repeat(`}`, levels-1))
	}
	v, err := New(schema, nil, Options{Validate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.AppendJSON(nil, nested(MaxValidateDepth+1)); err == nil || !strings.Contains(err.Error(), "nested deeper than 1000") {
		t.Fatalf("err %v", err)
	}
	if _, err := v.AppendJSON(nil, nested(MaxValidateDepth)); err != nil {
		t.Fatalf("%d levels: %v", MaxValidateDepth, err)
	}
	plain, err := New(schema, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.AppendJSON(nil, nested(5000)); err != nil {
		t.Fatalf("5000 levels without validation: %v", err)
	}
}
