package schema

import "strings"

// Table property names doris-sink reads (Doris table properties).
const (
	PropSequenceCol          = "function_column.sequence_col"
	PropSequenceType         = "function_column.sequence_type"
	PropMergeOnWrite         = "enable_unique_key_merge_on_write"
	PropDuplicateWithoutKeys = "enable_duplicate_without_keys_by_default"
)

// Column returns the column named name (case-insensitive, as Doris column
// names are), its index in t.Columns, and whether it exists.
func (t *Table) Column(name string) (Column, int, bool) {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c, i, true
		}
	}
	return Column{}, -1, false
}

// IsKey reports whether name (case-insensitive) is a key column.
func (t *Table) IsKey(name string) bool {
	for _, k := range t.KeyColumns {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// SequenceColumn returns the column that orders versions of a key in a
// UNIQUE table (docs/doris-facts.md §7): the column named by property
// function_column.sequence_col, else the hidden SequenceColumn
// ("__DORIS_SEQUENCE_COL__") when function_column.sequence_type is set
// (loads feed it through the function_column.sequence_col header), else "".
func (t *Table) SequenceColumn() string {
	if t.Keys != UniqueKeys {
		return ""
	}
	if c := t.Properties[PropSequenceCol]; c != "" {
		return c
	}
	if t.Properties[PropSequenceType] != "" {
		return SequenceColumn
	}
	return ""
}

// HasSequence reports whether t has a sequence column.
func (t *Table) HasSequence() bool { return t.SequenceColumn() != "" }

// MergeOnWrite reports whether t is a merge-on-write UNIQUE table: property
// enable_unique_key_merge_on_write, which defaults to true for tables
// created since Doris 2.1 (doris-website table-design/data-model/unique.md:
// "Since Doris 2.1, merge-on-write is the default mode for the primary key
// model"). Always false for other models.
func (t *Table) MergeOnWrite() bool {
	if t.Keys != UniqueKeys {
		return false
	}
	v, ok := t.Properties[PropMergeOnWrite]
	return !ok || !strings.EqualFold(v, "false")
}

// HasDeleteSign reports whether loads may set the hidden DeleteSignColumn
// ("__DORIS_DELETE_SIGN__", docs/doris-facts.md §7): UNIQUE tables get it by
// default (batch delete is enabled on new Unique Key tables); other models
// never have it.
func (t *Table) HasDeleteSign() bool { return t.Keys == UniqueKeys }
