package config

import (
	"errors"
	"strings"
	"testing"
)

func TestCreateTableAndSchemaEvolution(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, minimal, nil, nil, NeedRun)
	if c.Doris.CreateTable.Enabled || c.Records.SchemaEvolution != EvolutionNone {
		t.Fatalf("defaults: create_table %+v, schema_evolution %q", c.Doris.CreateTable, c.Records.SchemaEvolution)
	}
	c = mustLoad(t, merge(minimal, "doris: {create_table: true, create_table_buckets: 4, create_table_replication: 1}\n"+
		"records: {format: debezium, schema_evolution: ADD_COLUMNS}\n"), nil, nil, NeedRun)
	if ct := c.Doris.CreateTable; !ct.Enabled || ct.Buckets != 4 || ct.Replication != 1 || c.Records.SchemaEvolution != EvolutionAddColumns {
		t.Fatalf("create_table %+v, schema_evolution %q", ct, c.Records.SchemaEvolution)
	}
	c = mustLoad(t, minimal, []string{"DORIS_SINK_RECORDS__SCHEMA_EVOLUTION=add_columns"}, nil, NeedRun)
	if c.Records.SchemaEvolution != EvolutionAddColumns {
		t.Fatalf("env: %q", c.Records.SchemaEvolution)
	}
	// Under routing every routed table is created and evolved on its own.
	c = mustLoad(t, merge(minimal, "doris: {create_table: true}\nrecords: {format: debezium, schema_evolution: add_columns}\n"+
		"routing: {debezium_template: \"{db}_{table}\"}\n"), nil, nil, NeedRun)
	if !c.Doris.CreateTable.Enabled || c.Records.SchemaEvolution != EvolutionAddColumns || !c.Routing.Active() {
		t.Fatalf("routed create_table %+v, schema_evolution %q", c.Doris.CreateTable, c.Records.SchemaEvolution)
	}
	// The Kafka connector's option.
	c = mustLoad(t, merge(minimal, "debezium.schema.evolution: basic\n"), nil, nil, NeedRun)
	if c.Records.SchemaEvolution != EvolutionAddColumns {
		t.Fatalf("debezium.schema.evolution basic: %q", c.Records.SchemaEvolution)
	}

	for _, tc := range []struct{ yaml, key string }{
		{"records: {schema_evolution: drop_columns}\n", "records.schema_evolution"},
		{"doris: {create_table_buckets: -1}\n", "doris.create_table_buckets"},
		{"doris: {create_table_replication: 99}\n", "doris.create_table_replication"},
	} {
		_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
		keyError(t, err, tc.key)
	}
	var ce *ConflictError
	for _, tc := range []struct{ yaml, a, b string }{
		{"doris: {create_table: true}\n", "doris.create_table=true", "records.format=json"},
		{"records: {format: csv, schema_evolution: add_columns}\n", "records.schema_evolution=add_columns", "records.format=csv"},
	} {
		_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.a) || !strings.Contains(err.Error(), tc.b) {
			t.Errorf("%q: %v, want a *ConflictError naming %s and %s", tc.yaml, err, tc.a, tc.b)
		}
	}
}
