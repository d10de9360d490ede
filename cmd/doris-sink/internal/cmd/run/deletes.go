package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/drift"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// ErrDeletesNeedUnique is wrapped by CheckDeleteTable's error: the job
// loads deletes (records.delete.*) into a table that is not a Unique Key
// table, which has no delete sign (doris-api.md §7).
var ErrDeletesNeedUnique = errors.New("deletes need a Unique Key table")

// deleteConfig maps records.delete.*.
func deleteConfig(cfg *config.Config) kafka.DeleteConfig {
	d := cfg.Records.Delete
	return kafka.DeleteConfig{Field: d.Field, Value: d.Value, Tombstones: d.Tombstones}
}

// CheckDeleteTable refuses to run records.delete.* into a table that is
// not a Unique Key table: a Duplicate or Aggregate table has no
// __DORIS_DELETE_SIGN__, so the deletes would not delete. A table that
// cannot be read is refused too (the model is unknown); nothing is checked
// when the job loads no deletes.
func CheckDeleteTable(ctx context.Context, tr drift.TableReader, cfg *config.Config) error {
	if !cfg.Records.Delete.Enabled() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, table := cfg.Doris.Database, cfg.Doris.Table
	t, err := tr.ShowCreateTable(ctx, db, table)
	if err != nil {
		return fmt.Errorf("records.delete.*: cannot read the model of table %s.%s (deletes need a Unique Key table): %w", db, table, err)
	}
	if t.Keys != schema.UniqueKeys {
		return fmt.Errorf("records.delete.*: table %s.%s is a %s table: %w (%s); drop records.delete.* or load into a Unique Key table",
			db, table, t.Keys, ErrDeletesNeedUnique, schema.DeleteSignColumn)
	}
	return nil
}
