package config

// validateCompose refuses the records.format × routing combinations no
// conversion can honour (docs/configuration.md "Formats, routing,
// evolution and deletes together"; the composition matrix of issue 28
// asserts each refusal): a routing rule that reads the record value needs
// one with field names, and routing.debezium_template needs a Debezium
// change event (its source block).
func (c *Config) validateCompose() error {
	var errs errList
	r, ro := c.Records, c.Routing
	if r.Format == RecordsCSV && ro.TableField != "" {
		errs.add(&ConflictError{Keys: []string{"records.format=" + RecordsCSV, "routing.table_field=" + ro.TableField},
			Reason: "a csv line has no field names to read a table from",
			Fix:    "route csv by routing.topic_tables or routing.table_header"})
	}
	if ro.DebeziumTemplate != "" && !hasDebeziumEnvelope(r) {
		fix := "set records.envelope: debezium for Debezium change events, or route by routing.topic_tables, table_field or table_header"
		if r.Format == RecordsJSON || r.Format == RecordsCSV {
			fix = "use records.format: debezium for Debezium change events, or route by routing.topic_tables, table_field or table_header"
		}
		errs.add(&ConflictError{Keys: []string{"records.format=" + r.Format + envelopeSuffix(r), "routing.debezium_template=" + ro.DebeziumTemplate},
			Reason: "routing.debezium_template reads a Debezium change event's source.db and source.table; these records are not change events",
			Fix:    fix})
	}
	return errs.err()
}

// hasDebeziumEnvelope reports whether records of r are Debezium change
// events: records.format debezium, or a registry format with
// records.envelope debezium.
func hasDebeziumEnvelope(r Records) bool {
	return r.Format == RecordsDebezium || (IsRegistryFormat(r.Format) && r.Envelope == EnvelopeDebezium)
}

func envelopeSuffix(r Records) string {
	if r.Envelope == "" {
		return ""
	}
	return " (records.envelope=" + r.Envelope + ")"
}
