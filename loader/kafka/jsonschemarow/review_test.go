package jsonschemarow

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// subsetSchema is a schema of n+1 definitions whose date-time plan, built
// by merging the schemas that apply to one instance location, has 2^n
// distinct merged locations: the classic automaton whose subset
// construction is exponential ("the n-th last property is a"), written as
// properties, anyOf and $ref.
func subsetSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/q0","$defs":{`)
	b.WriteString(`"q0":{"properties":{"a":{"anyOf":[{"$ref":"#/$defs/q0"},{"$ref":"#/$defs/q1"}]},"b":{"$ref":"#/$defs/q0"}}}`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `,"q%d":{"properties":{"a":{"$ref":"#/$defs/q%d"},"b":{"$ref":"#/$defs/q%d"}}}`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `,"q%d":{"properties":{"t":{"type":"string","format":"date-time"}}}`, n)
	b.WriteString(`}}`)
	return b.String()
}

// Review of issue 25: the pre-scan bounds a schema's $refs (1000) and
// depth, but not what the date-time planner builds from them: a schema of
// n+1 small definitions (2n+1 $refs) made it build 2^n merged nodes: 17
// took 20 s and 60 would never end. Past a bound on the planner's nodes the
// schema is refused with ErrSchemaTooComplex.
func TestReviewDateTimePlanBounded(t *testing.T) {
	t.Parallel()
	if _, err := New(subsetSchema(4), nil, Options{}); err != nil {
		t.Fatalf("a small schema of the same shape: %v", err)
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	_, err := New(subsetSchema(17), nil, Options{})
	runtime.ReadMemStats(&ms1)
	if !errors.Is(err, ErrSchemaTooComplex) {
		t.Fatalf("New: %v, want ErrSchemaTooComplex", err)
	}
	if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > 512<<20 {
		t.Errorf("allocated %d MiB before refusing the schema", grew>>20)
	}
}
