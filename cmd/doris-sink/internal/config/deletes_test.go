package config

import (
	"errors"
	"strings"
	"testing"
)

func TestRecordsDelete(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, merge(minimal, "records: {delete: {field: op, value: d, tombstones: true}}\n"), nil, nil, NeedRun)
	if d := c.Records.Delete; d.Field != "op" || d.Value != "d" || !d.Tombstones || !d.Enabled() {
		t.Errorf("Delete = %+v", d)
	}
	c = mustLoad(t, minimal, []string{"DORIS_SINK_RECORDS__DELETE__TOMBSTONES=true"}, nil, NeedRun)
	if !c.Records.Delete.Tombstones || c.Records.Delete.Field != "" {
		t.Errorf("env: Delete = %+v", c.Records.Delete)
	}
	// The KC enable.delete alias sets the same hidden_columns: no conflict.
	mustLoad(t, merge(minimal, "enable.delete: true\nrecords: {delete: {tombstones: true}}\n"), nil, nil, NeedRun)

	for _, tc := range []struct{ yaml, key string }{
		{"records: {delete: {field: op}}\n", "records.delete.value"},
		{"records: {delete: {value: d}}\n", "records.delete.field"},
		{"records: {delete: {field: __DORIS_DELETE_SIGN__, value: '1'}}\n", "records.delete.field"},
		{"records: {delete: {tombstones: maybe}}\n", "records.delete.tombstones"},
	} {
		_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
		keyError(t, err, tc.key)
	}
	var ce *ConflictError
	for _, tc := range []struct{ yaml, a, b string }{
		{"records: {format: debezium, delete: {tombstones: true}}\n", "records.format=debezium", "records.delete.tombstones=true"},
		{"records: {format: csv, delete: {field: op, value: d}}\n", "records.format=csv", "records.delete.field=op"},
		{"doris: {properties: {merge_type: MERGE}}\nrecords: {delete: {field: op, value: d}}\n", "doris.properties.merge_type=MERGE", "records.delete.field=op"},
		{"doris: {properties: {hidden_columns: x}}\nrecords: {delete: {tombstones: true}}\n", "doris.properties.hidden_columns=x", "records.delete.tombstones=true"},
	} {
		_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.a) || !strings.Contains(err.Error(), tc.b) {
			t.Errorf("%q: %v, want a *ConflictError naming %s and %s", tc.yaml, err, tc.a, tc.b)
		}
	}
}

// routing.* keys decode from YAML and env into Config.Routing.
func TestRoutingKeys(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, merge(minimal, "records: {format: debezium}\nrouting: {topic_tables: {a: ta, b: db2.tb}, table_field: kind, table_header: tbl, "+
		"debezium_template: '{db}_{table}', default_table: orders}\n"), nil, nil, NeedRun)
	r := c.Routing
	if r.TopicTables["a"] != "ta" || r.TopicTables["b"] != "db2.tb" || r.TableField != "kind" || r.TableHeader != "tbl" ||
		r.DebeziumTemplate != "{db}_{table}" || r.DefaultTable != "orders" {
		t.Errorf("Routing = %+v", r)
	}
	c = mustLoad(t, minimal, []string{"DORIS_SINK_ROUTING__TABLE_FIELD=kind"}, nil, NeedRun)
	if c.Routing.TableField != "kind" {
		t.Errorf("env: Routing = %+v", c.Routing)
	}
}
