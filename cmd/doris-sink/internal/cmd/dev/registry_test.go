package dev

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// dev serves the Schema Registry at the printed URL: a schema registered
// there reads back by id, as a producer and doris-sink see it.
func TestDevServesSchemaRegistry(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	ep := startDev(t, f)
	if !strings.HasPrefix(ep.SchemaRegistry, "http://127.0.0.1:") {
		t.Fatalf("schema_registry %q, want a loopback URL", ep.SchemaRegistry)
	}
	cl, err := sr.NewClient(sr.URLs(ep.SchemaRegistry))
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"record","name":"O","fields":[{"name":"order_id","type":"long"}]}`
	ss, err := cl.CreateSchema(context.Background(), "orders-value", sr.Schema{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cl.SchemaByID(context.Background(), ss.ID)
	if err != nil || got.Schema != schema {
		t.Fatalf("SchemaByID: %+v %v", got, err)
	}
}

// --schema-registry "" serves none and prints none.
func TestDevWithoutSchemaRegistry(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	if ep := startDev(t, f, "--schema-registry", ""); ep.SchemaRegistry != "" {
		t.Fatalf("schema_registry %q, want none", ep.SchemaRegistry)
	}
}
