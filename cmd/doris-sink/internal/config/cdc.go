package config

import "strconv"

// Schema evolution modes (records.schema_evolution).
const (
	EvolutionNone       = "none"
	EvolutionAddColumns = "add_columns"
)

// CreateTable makes run create the target table from the first record's
// Debezium schema (doris.create_table*, docs/configuration.md "Creating the
// table and schema evolution").
type CreateTable struct {
	// Enabled creates a missing table (doris.create_table).
	Enabled bool `json:"enabled"`
	// Buckets is the bucket count; 0 is BUCKETS AUTO
	// (doris.create_table_buckets).
	Buckets int64 `json:"buckets,omitempty"`
	// Replication is replication_num; 0 leaves Doris's default
	// (doris.create_table_replication).
	Replication int64 `json:"replication,omitempty"`
}

func decodeCreateTable(d *decoder) CreateTable {
	return CreateTable{
		Enabled:     d.boolean("doris.create_table"),
		Buckets:     d.integer("doris.create_table_buckets"),
		Replication: d.integer("doris.create_table_replication"),
	}
}

// validateCDC checks doris.create_table* and records.schema_evolution.
func (c *Config) validateCDC() error {
	var errs errList
	ct := c.Doris.CreateTable
	if ct.Buckets < 0 || ct.Buckets > 1<<20 {
		errs.add(&KeyError{Key: "doris.create_table_buckets", Value: strconv.FormatInt(ct.Buckets, 10), Allowed: "0 (BUCKETS AUTO) or a bucket count"})
	}
	if ct.Replication < 0 || ct.Replication > 32 {
		errs.add(&KeyError{Key: "doris.create_table_replication", Value: strconv.FormatInt(ct.Replication, 10), Allowed: "0 (Doris's default) or a replica count"})
	}
	if ct.Enabled && c.Records.Format != RecordsDebezium {
		errs.add(&ConflictError{Keys: []string{"doris.create_table=true", "records.format=" + c.Records.Format},
			Reason: "the table is created from the records' Debezium schema (and the record key's primary key)",
			Fix:    "use records.format: debezium with the JSON converter's schemas enabled, or create the table yourself"})
	}
	switch c.Records.SchemaEvolution {
	case EvolutionNone:
	case EvolutionAddColumns:
		if c.Records.Format == RecordsCSV {
			errs.add(&ConflictError{Keys: []string{"records.schema_evolution=" + EvolutionAddColumns, "records.format=" + RecordsCSV},
				Reason: "csv rows have no field names to add", Fix: "drop records.schema_evolution"})
		}
	default:
		errs.add(&KeyError{Key: "records.schema_evolution", Value: c.Records.SchemaEvolution, Allowed: EvolutionNone + " or " + EvolutionAddColumns})
	}
	return errs.err()
}
