package registry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// TestIssue25SchemaCacheBounded: a topic naming more distinct schema ids
// than MaxSchemas keeps at most MaxSchemas cached; every record still
// decodes (a forgotten id is fetched again).
func TestIssue25SchemaCacheBounded(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	var values [][]byte
	for i := range 12 {
		schema := fmt.Sprintf(`{"type":"record","name":"U%d","fields":[{"name":"id","type":"long"}]}`, i)
		_, v := produce(t, cl, fmt.Sprintf("s%d-value", i), schema, map[string]any{"id": int64(i)})
		values = append(values, v)
	}
	c := newClient(t, srv.URL(), &sleeps{}, func(cfg *registry.Config) { cfg.MaxSchemas = 3 })
	for round := range 2 {
		for i, v := range values {
			out, err := c.AppendJSON(context.Background(), nil, v)
			if err != nil || string(out) != fmt.Sprintf(`{"id":%d}`, i) {
				t.Fatalf("round %d, id %d: %s, %v", round, i, out, err)
			}
			if n := c.CachedSchemas(); n > 3 {
				t.Fatalf("%d schemas cached, bound 3", n)
			}
		}
	}
}

// TestIssue25ReferenceChainBounded: a schema whose reference chain is
// longer than MaxReferenceDepth is a bad record (*RecordError naming the
// bound), refused before its references are compiled; a short chain
// decodes.
func TestIssue25ReferenceChainBounded(t *testing.T) {
	t.Parallel()
	srv, _ := newRegistry(t)
	reg := srv.Registry()
	// R0 is a record; Ri holds an R(i-1) and references subject r(i-1).
	ids := make([]int, registry.MaxReferenceDepth+3)
	for i := range ids {
		s := sr.Schema{Type: sr.TypeAvro, Schema: fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"x","type":"long"}]}`, i)}
		if i > 0 {
			s.Schema = fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"x","type":"long"},{"name":"p","type":"R%d"}]}`, i, i-1)
			s.References = []sr.SchemaReference{{Name: fmt.Sprintf("R%d", i-1), Subject: fmt.Sprintf("r%d", i-1), Version: 1}}
		}
		id, err := reg.Register(fmt.Sprintf("r%d", i), s)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	c := newClient(t, srv.URL(), &sleeps{}, nil)
	if _, err := c.Decoder(context.Background(), ids[3]); err != nil {
		t.Fatalf("a chain of 3: %v", err)
	}
	_, err := c.Decoder(context.Background(), ids[len(ids)-1])
	var re *registry.RecordError
	if !errors.As(err, &re) || re.ID != ids[len(ids)-1] || !strings.Contains(err.Error(), "nest deeper than") {
		t.Fatalf("err %v", err)
	}
}

// TestRowBoundThroughRegistry: Config.MaxRowBytes reaches the decoder; a
// row past it is a *RecordError naming the schema id.
func TestRowBoundThroughRegistry(t *testing.T) {
	t.Parallel()
	srv, cl := newRegistry(t)
	id, value := produce(t, cl, "users-value", userV1, map[string]any{"id": int64(7), "name": strings.Repeat("a", 200)})
	c := newClient(t, srv.URL(), &sleeps{}, func(cfg *registry.Config) { cfg.MaxRowBytes = 100 })
	_, err := c.AppendJSON(context.Background(), nil, value)
	var re *registry.RecordError
	if !errors.As(err, &re) || re.ID != id || !strings.Contains(err.Error(), "row too big") {
		t.Fatalf("err %v", err)
	}
}
