package config

import "strings"

// Delete makes json records delete rows of a Unique Key table without
// Debezium (records.delete.*, docs/configuration.md "Deletes without
// Debezium"): every row then carries __DORIS_DELETE_SIGN__, loaded through
// hidden_columns.
type Delete struct {
	// Field is the top-level field whose value Value marks a delete.
	Field string `json:"field,omitempty"`
	// Value is the value of Field that means delete.
	Value string `json:"value,omitempty"`
	// Tombstones makes a null-value record delete its (JSON) key.
	Tombstones bool `json:"tombstones,omitempty"`
}

// Enabled reports whether records can be deletes.
func (d Delete) Enabled() bool { return d.Field != "" || d.Tombstones }

func decodeDelete(d *decoder) Delete {
	return Delete{
		Field:      d.str("records.delete.field"),
		Value:      d.str("records.delete.value"),
		Tombstones: d.boolean("records.delete.tombstones"),
	}
}

// validateDelete checks records.delete.*: field and value together, json
// records only, and no second delete mechanism in doris.properties.
func (c *Config) validateDelete() error {
	d := c.Records.Delete
	var errs errList
	switch {
	case d.Field != "" && d.Value == "":
		errs.add(&KeyError{Key: "records.delete.value", Value: "", Allowed: "required with records.delete.field"})
	case d.Field == "" && d.Value != "":
		errs.add(&KeyError{Key: "records.delete.field", Value: "", Allowed: "required with records.delete.value"})
	}
	if strings.EqualFold(d.Field, DeleteSignColumn) {
		errs.add(&KeyError{Key: "records.delete.field", Value: d.Field, Allowed: "a field of the record, not the delete sign itself (to load a sign the records carry, set doris.properties.hidden_columns: " + DeleteSignColumn + ")"})
	}
	if !d.Enabled() {
		return errs.err()
	}
	key := "records.delete.field=" + d.Field
	if d.Field == "" {
		key = "records.delete.tombstones=true"
	}
	if c.Records.Format != RecordsJSON {
		reason, fix := "debezium records say themselves what is a delete (op d)", "drop records.delete.*"
		switch {
		case c.Records.Format == RecordsCSV:
			reason = "csv rows have no field names"
		case IsRegistryFormat(c.Records.Format):
			reason = "a registry format's deletes come from its Debezium envelope (op d)"
			fix = "drop records.delete.*; for Debezium change events set records.envelope: debezium"
		}
		errs.add(&ConflictError{Keys: []string{"records.format=" + c.Records.Format, key},
			Reason: "records.delete.* works on json records: " + reason, Fix: fix})
	}
	if mt := c.Doris.Properties["merge_type"]; mt != "" && !strings.EqualFold(mt, "APPEND") {
		errs.add(&ConflictError{Keys: []string{"doris.properties.merge_type=" + mt, key},
			Reason: "two ways to delete: merge_type " + mt + " and the delete sign set per record",
			Fix:    "keep one of them"})
	}
	if hc := c.Doris.Properties["hidden_columns"]; hc != "" && !strings.EqualFold(hc, DeleteSignColumn) {
		errs.add(&ConflictError{Keys: []string{"doris.properties.hidden_columns=" + hc, key},
			Reason: "records.delete.* loads hidden_columns: " + DeleteSignColumn,
			Fix:    "drop doris.properties.hidden_columns"})
	}
	return errs.err()
}
