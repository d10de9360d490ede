package config

import (
	"errors"
	"testing"
)

// records.json_schema.validate: off by default, on from YAML or from the
// JsonSchemaConverter's json.fail.invalid.schema, refused with a format
// other than json_schema, and a value that is not a boolean names the key.
func TestJSONSchemaValidateKey(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, merge(minimal, "records: {format: json_schema, schema_registry: {urls: [http://h:8081]}}\n"), nil, nil, NeedRun)
	if c.Records.JSONSchema.Validate {
		t.Fatal("records.json_schema.validate is on by default")
	}
	c = mustLoad(t, merge(minimal, "records: {format: json_schema, json_schema: {validate: true}, schema_registry: {urls: [http://h:8081]}}\n"), nil, nil, NeedRun)
	if !c.Records.JSONSchema.Validate {
		t.Fatal("records.json_schema.validate: true was not read")
	}
	c = mustLoad(t, "name: j\ntopics: [t]\ndoris.database: d\nvalue.converter: io.confluent.connect.json.JsonSchemaConverter\n"+
		"value.converter.schema.registry.url: http://sr:8081\nvalue.converter.json.fail.invalid.schema: true\n", nil, nil, NeedRun)
	if c.Records.Format != RecordsJSONSchema || !c.Records.JSONSchema.Validate {
		t.Fatalf("records %+v, want json_schema with validate from json.fail.invalid.schema", c.Records)
	}

	_, err := load(t, merge(minimal, "records: {format: avro, json_schema: {validate: true}, schema_registry: {urls: [http://h:8081]}}\n"), nil, nil, NeedRun)
	found := false
	for _, e := range flatten(err) {
		var ce *ConflictError
		if errors.As(e, &ce) && ce.Keys[0] == "records.json_schema.validate=true" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no ConflictError naming records.json_schema.validate in %v", err)
	}
	_, err = load(t, merge(minimal, "records: {format: json_schema, json_schema: {validate: maybe}, schema_registry: {urls: [http://h:8081]}}\n"), nil, nil, NeedRun)
	keyError(t, err, "records.json_schema.validate")
}
