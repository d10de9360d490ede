package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/drift"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// ErrDeletesNeedUnique is wrapped by CheckDeleteTable's error: the job
// loads deletes (records.delete.*) into a table that is not a Unique Key
// table, which has no delete sign (docs/doris-facts.md §7).
var ErrDeletesNeedUnique = errors.New("deletes need a Unique Key table")

// deleteConfig maps records.delete.*.
func deleteConfig(cfg *config.Config) kafka.DeleteConfig {
	d := cfg.Records.Delete
	return kafka.DeleteConfig{Field: d.Field, Value: d.Value, Tombstones: d.Tombstones}
}

// deleteSource names what makes the job load the delete sign, "" when
// nothing does: records.delete.*, records.format debezium (op d), or
// doris.properties.hidden_columns naming it (the records carry it, the
// Kafka connector's enable.delete).
func deleteSource(cfg *config.Config) string {
	switch {
	case cfg.Records.Delete.Enabled():
		return "records.delete.*"
	case cfg.Records.Format == config.RecordsDebezium:
		return "records.format debezium"
	case cfg.Records.Envelope == config.EnvelopeDebezium:
		return "records.envelope debezium"
	}
	for _, c := range strings.Split(cfg.Doris.Properties["hidden_columns"], ",") {
		if strings.EqualFold(strings.TrimSpace(c), schema.DeleteSignColumn) {
			return "doris.properties.hidden_columns " + schema.DeleteSignColumn
		}
	}
	return ""
}

// CheckDeleteTable refuses to run a job that loads deletes
// (deleteSource) into a table that is not a Unique Key table: a Duplicate
// or Aggregate table has no __DORIS_DELETE_SIGN__ (docs/doris-facts.md §7), so the
// deletes would not delete. A table that cannot be read is refused too
// (the model is unknown); nothing is checked when the job loads no
// deletes.
func CheckDeleteTable(ctx context.Context, tr drift.TableReader, cfg *config.Config) error {
	src := deleteSource(cfg)
	if src == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, table := cfg.Doris.Database, cfg.Doris.Table
	t, err := tr.ShowCreateTable(ctx, db, table)
	if err != nil {
		return fmt.Errorf("%s: cannot read the model of table %s.%s (deletes need a Unique Key table): %w", src, db, table, err)
	}
	if t.Keys != schema.UniqueKeys {
		return fmt.Errorf("%s: table %s.%s is a %s table: %w (%s); load deletes into a Unique Key table, or load no deletes",
			src, db, table, t.Keys, ErrDeletesNeedUnique, schema.DeleteSignColumn)
	}
	return nil
}
