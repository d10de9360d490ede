package config

import (
	"testing"
)

// tables.<pattern>.* decode into per-table overrides; an exact name wins
// over a pattern, a longer pattern over a shorter; unknown sub-keys and
// loader-set headers are refused, naming the key.
func TestTableOverrides(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, merge(minimal, "tables: {orders: {sequence_col: ver}, 'ord*': {properties: {max_filter_ratio: '0.1'}}, "+
		"'o*': {properties: {strict_mode: 'true'}}}\n"), nil, nil, NeedRun)
	base := map[string]string{"format": "json", "max_filter_ratio": "0"}
	p, ok := c.TableSettings("orders", base)
	if !ok || p["function_column.sequence_col"] != "ver" || p["max_filter_ratio"] != "0" {
		t.Errorf("orders: %v %t", p, ok)
	}
	if p, ok := c.TableSettings("order_lines", base); !ok || p["max_filter_ratio"] != "0.1" || p["strict_mode"] != "" {
		t.Errorf("order_lines (ord*): %v %t", p, ok)
	}
	if p, ok := c.TableSettings("other", base); !ok || p["strict_mode"] != "true" {
		t.Errorf("other (o*): %v %t", p, ok)
	}
	if p, ok := c.TableSettings("payments", base); ok || p["max_filter_ratio"] != "0" {
		t.Errorf("payments (no match): %v %t", p, ok)
	}
	if base["function_column.sequence_col"] != "" {
		t.Error("TableSettings changed its base")
	}
	for _, tc := range []struct{ yaml, key string }{
		{"tables: {orders: {format: csv}}\n", "tables.orders.format"},
		{"tables: {orders: {properties: {label: x}}}\n", "tables.orders.properties.label"},
		{"tables: {'[': {sequence_col: v}}\n", "tables.["},
	} {
		_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
		keyError(t, err, tc.key)
	}
}

// tables.<pattern>.delete.* gives a routed table its own delete handling
// (and the hidden_columns its rows need); other tables keep
// records.delete.*. It needs routing and json records.
func TestTableDeletes(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, merge(minimal, "routing: {table_field: t}\nrecords: {delete: {field: op, value: d}}\n"+
		"tables: {'audit_*': {delete: {tombstones: 'true'}}}\n"), nil, nil, NeedRun)
	if !c.TableDeletes() {
		t.Fatal("TableDeletes = false")
	}
	if d := c.TableDelete("audit_x"); !d.Tombstones || d.Field != "" {
		t.Errorf("audit_x delete %+v, want its own (tombstones)", d)
	}
	if d := c.TableDelete("orders"); d.Field != "op" || d.Value != "d" || d.Tombstones {
		t.Errorf("orders delete %+v, want records.delete.*", d)
	}
	if p, _ := c.TableSettings("audit_x", map[string]string{}); p["hidden_columns"] != DeleteSignColumn {
		t.Errorf("audit_x properties %v, want hidden_columns %s", p, DeleteSignColumn)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"tables: {orders: {delete: {tombstones: 'true'}}}\n", "tables.orders.delete"},
		{"routing: {table_field: t}\ntables: {orders: {delete: {field: op}}}\n", "tables.orders.delete"},
		{"routing: {table_field: t}\nrecords: {format: csv}\ntables: {orders: {delete: {tombstones: 'true'}}}\n", "tables.orders.delete"},
		{"routing: {table_field: t}\ntables: {orders: {delete: {tombstones: maybe}}}\n", "tables.orders.delete.tombstones"},
	} {
		_, err := load(t, merge(minimal, tc.yaml), nil, nil, NeedRun)
		keyError(t, err, tc.key)
	}
}
