package schema

import (
	"fmt"
	"strings"
)

// keysName is Doris's internal name of a model, used in its messages.
func keysName(k KeysType) string {
	switch k {
	case DuplicateKeys:
		return "DUP_KEYS"
	case UniqueKeys:
		return "UNIQUE_KEYS"
	case AggregateKeys:
		return "AGG_KEYS"
	}
	return string(k)
}

// Validate checks the rules Doris's FE applies when it creates t, with
// messages modelled on the FE's (CreateTableInfo, KeysDesc, ColumnDef,
// DistributionDesc, PropertyAnalyzer): column names unique
// (case-insensitive); key columns exist and are an ordered prefix of the
// columns; AGGREGATE value columns have an aggregation and key columns none;
// UNIQUE and DUPLICATE columns have none; HASH distribution columns exist
// (and are key columns for UNIQUE/AGGREGATE); no RANDOM distribution on
// UNIQUE tables (nor on AGGREGATE tables with REPLACE columns);
// function_column.sequence_col names an existing integer or date column of
// a UNIQUE table; enable_unique_key_merge_on_write only on UNIQUE tables.
// Errors carry Doris's text without the "errCode = 2, detailMessage = "
// prefix.
func (t *Table) Validate() error {
	if t.Name == "" {
		return fmt.Errorf("Table name is empty")
	}
	if len(t.Columns) == 0 {
		return fmt.Errorf("Table %s should contain at least one column", t.Name)
	}
	seen := map[string]bool{}
	for _, c := range t.Columns {
		if c.Name == "" {
			return fmt.Errorf("Column name is empty")
		}
		if seen[strings.ToLower(c.Name)] {
			return fmt.Errorf("Duplicate column name '%s'", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if _, ok := parseTypeString(c.Type); !ok {
			return fmt.Errorf("Unknown data type %q of column %s", c.Type, c.Name)
		}
	}
	switch t.Keys {
	case DuplicateKeys, UniqueKeys, AggregateKeys:
	default:
		return fmt.Errorf("Unknown keys type %q, want DUPLICATE, UNIQUE or AGGREGATE", t.Keys)
	}
	if err := t.validateKeys(); err != nil {
		return err
	}
	if err := t.validateAgg(); err != nil {
		return err
	}
	if err := t.validateDistribution(); err != nil {
		return err
	}
	return t.validateProperties()
}

func (t *Table) validateKeys() error {
	if len(t.KeyColumns) == 0 {
		if t.Keys == DuplicateKeys && strings.EqualFold(t.Properties[PropDuplicateWithoutKeys], "true") {
			return nil
		}
		if t.Keys == DuplicateKeys {
			return fmt.Errorf("The olap table first column could not be float, double, string or array, struct, map, please use decimal or varchar instead.")
		}
		return fmt.Errorf("%s table should specify key columns", keysName(t.Keys))
	}
	if len(t.KeyColumns) > len(t.Columns) {
		return fmt.Errorf("The number of key columns should be less than the number of columns.")
	}
	if len(t.KeyColumns) == len(t.Columns) && t.Keys != DuplicateKeys {
		return fmt.Errorf("The number of key columns should be less than the number of columns.")
	}
	for i, k := range t.KeyColumns {
		if _, _, ok := t.Column(k); !ok {
			return fmt.Errorf("Key column[%s] doesn't exist.", k)
		}
		if name := t.Columns[i].Name; !strings.EqualFold(name, k) {
			return fmt.Errorf("Key columns should be a ordered prefix of the schema. KeyColumns[%d] (starts from zero) is %s, but corresponding column is %s in the previous columns declaration.", i, k, name)
		}
	}
	return nil
}

func (t *Table) validateAgg() error {
	for i, c := range t.Columns {
		isKey := i < len(t.KeyColumns)
		switch {
		case isKey && c.Agg != AggNone:
			return fmt.Errorf("Key column %s should not specify aggregate type %s", c.Name, c.Agg)
		case !isKey && t.Keys == AggregateKeys && c.Agg == AggNone:
			return fmt.Errorf("AGG_KEYS table should specify aggregate type for non-key column[%s]", c.Name)
		case !isKey && t.Keys != AggregateKeys && c.Agg != AggNone:
			return fmt.Errorf("%s table should not specify aggregate type for non-key column[%s]", keysName(t.Keys), c.Name)
		case c.Agg == AggReplaceIfNotNull && !c.Nullable:
			return fmt.Errorf("REPLACE_IF_NOT_NULL column %s must be nullable, maybe should use REPLACE instead", c.Name)
		}
	}
	return nil
}

func (t *Table) validateDistribution() error {
	if t.Buckets < 0 {
		return fmt.Errorf("Number of hash distribution should be greater than zero.")
	}
	if len(t.DistributedBy) == 0 {
		if t.Keys == UniqueKeys {
			return fmt.Errorf("Create unique keys table should not contain random distribution desc")
		}
		if t.Keys == AggregateKeys {
			for _, c := range t.Columns {
				if c.Agg == AggReplace || c.Agg == AggReplaceIfNotNull {
					return fmt.Errorf("Create aggregate keys table with value columns of which aggregate type is %s should not contain random distribution desc", c.Agg)
				}
			}
		}
		return nil
	}
	seen := map[string]bool{}
	for _, d := range t.DistributedBy {
		if _, _, ok := t.Column(d); !ok {
			return fmt.Errorf("Distribution column(%s) doesn't exist.", d)
		}
		if seen[strings.ToLower(d)] {
			return fmt.Errorf("Duplicated distribution column %s", d)
		}
		seen[strings.ToLower(d)] = true
		if t.Keys != DuplicateKeys && !t.IsKey(d) {
			return fmt.Errorf("Distribution column[%s] is not key column", d)
		}
	}
	return nil
}

func (t *Table) validateProperties() error {
	if seq, ok := t.Properties[PropSequenceCol]; ok {
		if t.Keys != UniqueKeys {
			return fmt.Errorf("The sequence column only support UNIQUE_KEYS")
		}
		c, _, found := t.Column(seq)
		if !found {
			return fmt.Errorf("The specified sequence column[%s] not exists", seq)
		}
		typ, _ := parseTypeString(c.Type)
		if !isSequenceType(typ) {
			return fmt.Errorf("Sequence type only support integer types and date types")
		}
	}
	if _, ok := t.Properties[PropSequenceType]; ok && t.Keys != UniqueKeys {
		return fmt.Errorf("The sequence column only support UNIQUE_KEYS")
	}
	if v, ok := t.Properties[PropMergeOnWrite]; ok {
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Errorf("Invalid %s value: %s, must be true or false", PropMergeOnWrite, v)
		}
		if t.Keys != UniqueKeys && strings.EqualFold(v, "true") {
			return fmt.Errorf("enable_unique_key_merge_on_write property only support unique key table")
		}
	}
	return nil
}
