package config

import (
	"fmt"
	"maps"
	"path"
	"slices"
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
			d.fail("tables."+k, v, "want tables.<table or pattern>.properties.<header> or .sequence_col")
			continue
		case rest == "sequence_col":
			o.SequenceCol = v
		case strings.HasPrefix(rest, "properties.") && len(rest) > len("properties."):
			if o.Properties == nil {
				o.Properties = map[string]string{}
			}
			o.Properties[strings.TrimPrefix(rest, "properties.")] = v
		default:
			d.fail("tables."+k, v, "want .properties.<header> or .sequence_col (per-table format and deletes are not built)")
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

// String describes o for logs.
func (o TableOverride) String() string {
	return fmt.Sprintf("properties %v sequence_col %q", o.Properties, o.SequenceCol)
}
