package run

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

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
	opts := cdcschema.TableOptions{Buckets: int(cfg.Doris.CreateTable.Buckets), Replication: int(cfg.Doris.CreateTable.Replication)}
	evolver := func(db, table string, evidence func(kind, ddl string)) *kafka.TableEvolver {
		return &kafka.TableEvolver{
			DDL: td, DB: db, Table: table, Create: create, AddColumns: add, TableOptions: opts,
			Evidence: func(kind, stmt string) {
				evidence(kind, stmt)
				km.TableChanges.Add(1)
			},
			Log: log,
		}
	}
	if cfg.Routing.Active() {
		// One evolver per routed table, made on the table's first record.
		return kafka.WithTableEvolvers(func(table string) kafka.SchemaEvolver {
			db, tbl, ok := strings.Cut(table, ".")
			if !ok {
				db, tbl = cfg.Doris.Database, table
			}
			return evolver(db, tbl, func(kind, stmt string) { ld.RecordTableChangeOf(db+"."+tbl, kind, stmt) })
		}), nil
	}
	return kafka.WithSchemaEvolver(evolver(cfg.Doris.Database, cfg.Doris.Table, ld.RecordTableChange)), nil
}

// tableToCreate reports whether err only says that the table does not
// exist yet while doris.create_table will create it (a created table is a
// Unique Key table: the start-up checks that need the table pass).
func tableToCreate(cfg *config.Config, err error) bool {
	return cfg.Doris.CreateTable.Enabled && errors.Is(err, doris.ErrNotFound)
}
