package cmdutil

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
	"github.com/doris-sink/doris-sink/loader/kafka/registry/srtest"
)

// records.json_schema.validate reaches the decoder: a JSON Schema record
// that does not match its schema is a *registry.RecordError with it, and a
// row without it.
func TestSchemaRegistryJSONSchemaValidate(t *testing.T) {
	t.Parallel()
	reg, err := srtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	id, err := reg.Registry().Register("t-value", sr.Schema{Type: sr.TypeJSON,
		Schema: `{"type":"object","properties":{"id":{"type":"integer"}}}`})
	if err != nil {
		t.Fatal(err)
	}
	var s sr.Serde
	s.Register(id, "", sr.EncodeFn(func(v any) ([]byte, error) { return []byte(v.(string)), nil }))
	bad := s.MustEncode(`{"id":"one"}`)
	for _, validate := range []bool{false, true} {
		cfg := &config.Config{Records: config.Records{Format: config.RecordsJSONSchema,
			SchemaRegistry: config.SchemaRegistry{URLs: []string{reg.URL()}}, JSONSchema: config.JSONSchemaRecords{Validate: validate}}}
		c, err := SchemaRegistry(cfg)
		if err != nil {
			t.Fatal(err)
		}
		row, err := c.AppendJSON(context.Background(), nil, bad)
		var re *registry.RecordError
		switch {
		case validate && (!errors.As(err, &re) || re.ID != id):
			t.Fatalf("validate: %s, %v; want a RecordError of schema id %d", row, err, id)
		case !validate && (err != nil || string(row) != `{"id":"one"}`):
			t.Fatalf("no validate: %s, %v; want the record as its row", row, err)
		}
	}
}
