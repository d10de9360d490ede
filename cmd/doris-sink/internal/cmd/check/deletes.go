package check

import (
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// checkDeletes fails records.delete.* on a table without the delete sign
// (Duplicate and Aggregate tables, docs/doris-facts.md §7), as run refuses it.
func checkDeletes(r *Report, cfg *config.Config, t *schema.Table) {
	d := cfg.Records.Delete
	if !d.Enabled() {
		if cfg.Records.Format != config.RecordsDebezium && hasDeleteSign(cfg.Doris.Properties["hidden_columns"]) && !t.HasDeleteSign() {
			r.add(Fail, "deletes", "doris.properties.hidden_columns loads %s (the Kafka connector's enable.delete), but %s.%s is a %s table, which has none (run refuses it)",
				schema.DeleteSignColumn, cfg.Doris.Database, cfg.Doris.Table, t.Keys)
		}
		return
	}
	what := "tombstones (null values) delete their JSON key"
	if d.Field != "" {
		what = "records with " + d.Field + " = " + d.Value + " delete their key"
		if d.Tombstones {
			what += "; tombstones (null values) delete their JSON key"
		}
	}
	if t.HasDeleteSign() {
		r.add(OK, "deletes", "records.delete: %s (%s = 1)", what, schema.DeleteSignColumn)
		return
	}
	r.add(Fail, "deletes", "records.delete.* needs a Unique Key table with the delete sign (%s); %s.%s is a %s table, where deletes cannot be applied (run refuses it)",
		schema.DeleteSignColumn, cfg.Doris.Database, cfg.Doris.Table, t.Keys)
}

func hasDeleteSign(hidden string) bool {
	for _, c := range strings.Split(hidden, ",") {
		if strings.EqualFold(strings.TrimSpace(c), schema.DeleteSignColumn) {
			return true
		}
	}
	return false
}
