package run

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
)

// evolverOpt returns the connector option of doris.create_table and
// records.schema_evolution (nil when neither is on). The table changes go
// through ddl (the Doris client), are recorded in ld's ledger and counted in
// km.TableChanges.
func evolverOpt(cfg *config.Config, ddl any, ld *loader.Loader, km *kafka.Metrics, log *slog.Logger) (kafka.Opt, error) {
	create, add := cfg.Doris.CreateTable.Enabled, cfg.Records.SchemaEvolution == config.EvolutionAddColumns
	if !create && !add {
		return nil, nil
	}
	td, ok := ddl.(kafka.TableDDL)
	if !ok {
		return nil, fmt.Errorf("doris.create_table / records.schema_evolution: the Doris client %T cannot run DDL", ddl)
	}
	return kafka.WithSchemaEvolver(&kafka.TableEvolver{
		DDL: td, DB: cfg.Doris.Database, Table: cfg.Doris.Table,
		Create: create, AddColumns: add,
		TableOptions: cdcschema.TableOptions{Buckets: int(cfg.Doris.CreateTable.Buckets), Replication: int(cfg.Doris.CreateTable.Replication)},
		Evidence: func(kind, stmt string) {
			ld.RecordTableChange(kind, stmt)
			km.TableChanges.Add(1)
		},
		Log: log,
	}), nil
}

// tableToCreate reports whether err only says that the table does not
// exist yet while doris.create_table will create it (a created table is a
// Unique Key table: the start-up checks that need the table pass).
func tableToCreate(cfg *config.Config, err error) bool {
	return cfg.Doris.CreateTable.Enabled && errors.Is(err, doris.ErrNotFound)
}
