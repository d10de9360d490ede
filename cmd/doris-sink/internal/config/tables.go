package config

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// TableOverride is the per-table settings of the tables.<pattern> keys:
// what a table (or every table whose name matches a pattern) loads with
// instead of the doris.* defaults.
type TableOverride struct {
	// Properties are Stream Load headers merged over doris.properties
	// (tables.<pattern>.properties.<header>).
	Properties map[string]string `json:"properties,omitempty"`
	// SequenceCol is the sequence column of the table's Unique Key model,
	// sent as function_column.sequence_col (tables.<pattern>.sequence_col).
	SequenceCol string `json:"sequence_col,omitempty"`
	// Delete is the table's own delete handling, replacing records.delete.*
	// for it (tables.<pattern>.delete.field, .value, .tombstones); the
	// zero value keeps records.delete.*.
	Delete Delete `json:"delete,omitzero"`
}

// decodeTables reads the tables.<pattern>.* keys.
func decodeTables(d *decoder) map[string]TableOverride {
	flat := d.subMap("tables")
	if len(flat) == 0 {
		return nil
	}
	out := map[string]TableOverride{}
	for k, v := range flat {
		pattern, rest, ok := strings.Cut(k, ".")
		o := out[pattern]
		switch {
		case !ok || pattern == "":
			d.fail("tables."+k, v, "want tables.<table or pattern>.properties.<header>, .sequence_col or .delete.*")
			continue
		case rest == "sequence_col":
			o.SequenceCol = v
		case rest == "delete.field":
			o.Delete.Field = v
		case rest == "delete.value":
			o.Delete.Value = v
		case rest == "delete.tombstones":
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				d.fail("tables."+k, v, "want true or false")
				continue
			}
			o.Delete.Tombstones = b
		case strings.HasPrefix(rest, "properties.") && len(rest) > len("properties."):
			if o.Properties == nil {
				o.Properties = map[string]string{}
			}
			o.Properties[strings.TrimPrefix(rest, "properties.")] = v
		default:
			d.fail("tables."+k, v, "want .properties.<header>, .sequence_col or .delete.field/.value/.tombstones (the record format is one per job)")
			continue
		}
		out[pattern] = o
	}
	return out
}

// validateTables checks the patterns (path.Match syntax, a table name of
// doris.database) and refuses the headers the loader sets itself.
func (c *Config) validateTables(bad func(key string, v any, allowed string)) {
	for pattern, o := range c.Tables {
		if _, err := path.Match(pattern, ""); err != nil {
			bad("tables."+pattern, pattern, "want a table name or a glob pattern (*, ?, [...]): "+err.Error())
		}
		if del := o.Delete; del.Enabled() || del.Value != "" {
			key := "tables." + pattern + ".delete"
			switch {
			case !c.Routing.Active():
				bad(key, del, "with routing.* only (one table loads with records.delete.*)")
			case c.Records.Format != RecordsJSON:
				bad(key, del, "only with records.format json (debezium records say themselves what is a delete; csv rows have no field names)")
			case (del.Field == "") != (del.Value == ""):
				bad(key, del, ".field and .value go together")
			case strings.EqualFold(del.Field, DeleteSignColumn):
				bad(key+".field", del.Field, "a field of the record, not the delete sign itself")
			}
		}
		for h := range o.Properties {
			for _, r := range []string{"label", "two_phase_commit", "format"} {
				if strings.EqualFold(h, r) {
					bad("tables."+pattern+".properties."+h, o.Properties[h], "set by the loader, remove it")
				}
			}
		}
	}
}

// TableSettings returns the Stream Load properties of table (of
// doris.database): base (doris.properties and what the record format
// needs) with the matching tables.<pattern> override merged over it. An
// exact name wins over patterns, a longer pattern over a shorter one (then
// the lexically first). ok is false when no override matches.
func (c *Config) TableSettings(table string, base map[string]string) (props map[string]string, ok bool) {
	o, ok := c.tableOverride(table)
	if !ok {
		return base, false
	}
	props = maps.Clone(base)
	if props == nil {
		props = map[string]string{}
	}
	if o.Delete.Enabled() {
		props["hidden_columns"] = DeleteSignColumn // the table's rows carry the delete sign
	}
	maps.Copy(props, o.Properties)
	if o.SequenceCol != "" {
		props["function_column.sequence_col"] = o.SequenceCol
	}
	return props, true
}

func (c *Config) tableOverride(table string) (TableOverride, bool) {
	if o, ok := c.Tables[table]; ok {
		return o, true
	}
	patterns := slices.Collect(maps.Keys(c.Tables))
	slices.SortFunc(patterns, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	for _, p := range patterns {
		if m, err := path.Match(p, table); err == nil && m {
			return c.Tables[p], true
		}
	}
	return TableOverride{}, false
}

// TableDelete returns the delete handling of table (of doris.database):
// its tables.<pattern>.delete when the matching override sets one, else
// records.delete.*.
func (c *Config) TableDelete(table string) Delete {
	if o, ok := c.tableOverride(table); ok && o.Delete.Enabled() {
		return o.Delete
	}
	return c.Records.Delete
}

// TableDeletes reports whether some tables.<pattern> sets its own
// delete handling.
func (c *Config) TableDeletes() bool {
	for _, o := range c.Tables {
		if o.Delete.Enabled() {
			return true
		}
	}
	return false
}

// String describes o for logs.
func (o TableOverride) String() string {
	return fmt.Sprintf("properties %v sequence_col %q", o.Properties, o.SequenceCol)
}
