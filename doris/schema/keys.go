package schema

import "strings"

// Doris short-key limits (FE FeConstants).
const (
	shortKeyMaxColumns = 3
	shortKeyMaxBytes   = 36
)

// inferKeys sets Keys and KeyColumns of a table declared without a key
// clause, as Doris's FE does (CreateTableStmt / CreateTableInfo):
// AGGREGATE KEY on the non-aggregated columns when some column has an
// aggregation, else DUPLICATE KEY on the short-key prefix.
func inferKeys(t *Table) {
	for _, c := range t.Columns {
		if c.Agg != AggNone {
			t.Keys = AggregateKeys
			t.KeyColumns = nil
			for _, k := range t.Columns {
				if k.Agg == AggNone {
					t.KeyColumns = append(t.KeyColumns, k.Name)
				}
			}
			return
		}
	}
	t.Keys = DuplicateKeys
	t.KeyColumns = nil
	if strings.EqualFold(t.Properties[PropDuplicateWithoutKeys], "true") {
		return
	}
	size := 0
	for _, c := range t.Columns {
		typ, ok := parseTypeString(c.Type)
		if !ok {
			return
		}
		size += indexSize(typ)
		if len(t.KeyColumns) >= shortKeyMaxColumns || size > shortKeyMaxBytes {
			if len(t.KeyColumns) == 0 && (typ.name == "CHAR" || typ.name == "VARCHAR") {
				t.KeyColumns = append(t.KeyColumns, c.Name)
			}
			return
		}
		if !couldBeShortKey(typ) {
			return
		}
		t.KeyColumns = append(t.KeyColumns, c.Name)
		if typ.name == "VARCHAR" {
			return
		}
	}
}
