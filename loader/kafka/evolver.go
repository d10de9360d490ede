package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Schema evolution modes (records.schema_evolution).
const (
	// EvolutionNone never changes the table (the default): fields the table
	// lacks are counted in unknown_fields and not loaded.
	EvolutionNone = "none"
	// EvolutionAddColumns adds the columns a Debezium schema change, or a
	// new JSON field, needs (ALTER TABLE … ADD COLUMN, a light schema
	// change), lengthens VARCHAR columns, and never drops or narrows one.
	EvolutionAddColumns = "add_columns"
)

// ErrSchemaRefused is wrapped by the schema evolution failures that
// retrying cannot fix (the table's key differs from the records' key, a
// table to create without the records' schema): Run stops with it.
var ErrSchemaRefused = errors.New("schema evolution refused")

// TableDDL is the Doris a TableEvolver needs (*doris.Client).
type TableDDL interface {
	ShowCreateTable(ctx context.Context, db, table string) (*schema.Table, error)
	ExecDDL(ctx context.Context, stmt string) error
}

// TableEvolver is the SchemaEvolver of one Doris table: it creates the
// table from the first record's Debezium schema (Create) and adds the
// columns later records need (AddColumns). It caches the table's schema:
// Needs reads Doris only the first time, and after a change it made. Not
// safe for concurrent use (the Connector calls it from its Run goroutine).
type TableEvolver struct {
	// DDL reads and changes the table.
	DDL TableDDL
	// DB and Table name the table.
	DB, Table string
	// Create makes a missing table from the first record's Debezium
	// schema (doris.create_table): a Unique Key, merge-on-write table on the
	// record key's fields (cdcschema.NewTable).
	Create bool
	// TableOptions shape a created table (doris.create_table_buckets,
	// doris.create_table_replication).
	TableOptions cdcschema.TableOptions
	// AddColumns enables EvolutionAddColumns.
	AddColumns bool
	// Evidence records a ledger.EventTableCreated / EventSchemaChanged
	// entry with the DDL (loader.Loader.RecordTableChange); nil: none.
	Evidence func(kind, ddl string)
	// Log receives one line per change; nil: discard.
	Log *slog.Logger

	cur *schema.Table // nil: not read yet, or missing
}

// AddsColumns implements SchemaEvolver.
func (e *TableEvolver) AddsColumns() bool { return e.AddColumns }

func (e *TableEvolver) name() string { return e.DB + "." + e.Table }

// load reads the table once; ok is false when it does not exist.
func (e *TableEvolver) load(ctx context.Context, force bool) (bool, error) {
	if e.cur != nil && !force {
		return true, nil
	}
	t, err := e.DDL.ShowCreateTable(ctx, e.DB, e.Table)
	switch {
	case errors.Is(err, doris.ErrNotFound):
		e.cur = nil
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read table %s: %w", e.name(), err)
	}
	e.cur = t
	return true, nil
}

// Needs implements SchemaEvolver.
func (e *TableEvolver) Needs(ctx context.Context, in Incoming) ([]schema.Column, bool, error) {
	ok, err := e.load(ctx, false)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		if e.Create {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("table %s: %w (set doris.create_table: true to create it from the records' Debezium schema)",
			e.name(), doris.ErrNotFound)
	}
	if err := e.compareKey(in); err != nil {
		return nil, false, err
	}
	if !e.AddColumns {
		return columnNames(e.cur), false, nil
	}
	ch, err := e.plan(in)
	if err != nil {
		return nil, false, err
	}
	return columnNames(e.cur), !ch.Empty(), nil
}

// plan is cdcschema.Plan on the cached table; widening a key column is a
// type change evolution does not make. Fields without a schema (a type
// inferred from one JSON value) only name columns to add: one the table
// has is left as it is (its inferred type, e.g. STRING for a VARCHAR
// column's value, says nothing about the column). A routed table's
// converter knows none of its columns before its first Needs, so its
// first row's fields all come here.
func (e *TableEvolver) plan(in Incoming) (cdcschema.Change, error) {
	fields := in.Fields
	if !in.FromSchema {
		fields = slices.DeleteFunc(slices.Clone(fields), func(f cdcschema.Field) bool {
			_, _, ok := e.cur.Column(f.Name)
			return ok
		})
	}
	ch, err := cdcschema.Plan(e.cur, fields)
	if err != nil {
		return ch, err
	}
	for _, c := range ch.Widen {
		if e.cur.IsKey(c.Name) {
			old, _, _ := e.cur.Column(c.Name)
			return ch, &cdcschema.TypeChangeError{Table: e.name(), Column: c.Name, OldType: old.Type, NewType: c.Type}
		}
	}
	return ch, nil
}

// Apply implements SchemaEvolver.
func (e *TableEvolver) Apply(ctx context.Context, in Incoming) ([]schema.Column, error) {
	ok, err := e.load(ctx, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		if !e.Create {
			return nil, fmt.Errorf("table %s: %w", e.name(), doris.ErrNotFound)
		}
		if err := e.create(ctx, in); err != nil {
			return nil, err
		}
	} else if err := e.compareKey(in); err != nil {
		return nil, err
	}
	if !e.AddColumns {
		return columnNames(e.cur), nil
	}
	ch, err := e.plan(in)
	if err != nil || ch.Empty() {
		return columnNames(e.cur), err
	}
	ddl := schema.AlterColumnsSQL(e.DB, e.Table, ch.Add, ch.Widen)
	if err := e.DDL.ExecDDL(ctx, ddl); err != nil {
		// Done already (a crash after the ALTER, another writer)? Re-read
		// and re-plan: nothing left to do is success.
		if _, lerr := e.load(ctx, true); lerr == nil && e.cur != nil {
			if ch2, perr := e.plan(in); perr == nil && ch2.Empty() {
				return columnNames(e.cur), nil
			}
		}
		return nil, fmt.Errorf("schema evolution of table %s: %w", e.name(), err)
	}
	if _, err := e.load(ctx, true); err != nil {
		return nil, err
	}
	if e.cur == nil {
		return nil, fmt.Errorf("table %s vanished after %s", e.name(), ddl)
	}
	// A light schema change is visible when the ALTER returns; a heavy one
	// (a table with light_schema_change off) runs as a job, and a load begun
	// before it ends would not see the column. Not visible yet: retry later
	// (the next attempt finds the column there, or Doris refusing the
	// repeated ALTER while the job runs, and re-plans).
	if ch2, err := e.plan(in); err != nil || !ch2.Empty() {
		return nil, fmt.Errorf("table %s: %s returned but the change is not visible yet (a heavy schema change job? "+
			"set the table property light_schema_change to true); retrying", e.name(), ddl)
	}
	e.logf("schema evolution: table changed before the load that needs it", in, "ddl", ddl)
	e.record(ledger.EventSchemaChanged, ddl)
	return columnNames(e.cur), nil
}

// create runs CREATE TABLE IF NOT EXISTS from in's Debezium schema and
// reads the table back. A table that exists already (created meanwhile) is
// kept as it is: Apply then compares it with in like any table.
func (e *TableEvolver) create(ctx context.Context, in Incoming) error {
	if !in.FromSchema {
		return fmt.Errorf("%w: table %s does not exist and doris.create_table needs the record's Debezium schema to create it: "+
			"the record at %s/%d@%d has none (run the source's JSON converter with schemas.enable=true)",
			ErrSchemaRefused, e.name(), in.Topic, in.Partition, in.Offset)
	}
	if len(in.Keys) == 0 {
		return fmt.Errorf("%w: table %s does not exist and doris.create_table needs the primary key from the record key's "+
			"Connect schema: the record at %s/%d@%d has none (key.converter.schemas.enable=true)",
			ErrSchemaRefused, e.name(), in.Topic, in.Partition, in.Offset)
	}
	t, err := cdcschema.NewTable(e.DB, e.Table, in.Fields, in.Keys, e.TableOptions)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSchemaRefused, err)
	}
	ddl := t.CreateTableIfNotExistsSQL()
	if err := e.DDL.ExecDDL(ctx, ddl); err != nil {
		return fmt.Errorf("create table %s: %w", e.name(), err)
	}
	ok, err := e.load(ctx, true)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("table %s: not found right after %s", e.name(), firstLine(ddl))
	}
	if err := e.compareKey(in); err != nil {
		return err
	}
	e.logf("created the table from the record's Debezium schema", in, "ddl", ddl)
	e.record(ledger.EventTableCreated, ddl)
	return nil
}

// compareKey checks, with Create, that an existing table is the table
// doris.create_table would have made as far as the key goes: a Unique Key
// on the record key's fields in order. An existing table is compared, never
// replaced. Nothing is compared without a record key schema.
func (e *TableEvolver) compareKey(in Incoming) error {
	if !e.Create || !in.FromSchema || len(in.Keys) == 0 || e.cur == nil {
		return nil
	}
	same := e.cur.Keys == schema.UniqueKeys && len(e.cur.KeyColumns) == len(in.Keys)
	for i := 0; same && i < len(in.Keys); i++ {
		same = strings.EqualFold(e.cur.KeyColumns[i], in.Keys[i])
	}
	if same {
		return nil
	}
	return fmt.Errorf("%w: table %s exists with another key (%s KEY(%s)), not the one the records' key names (UNIQUE KEY(%s)): "+
		"doris-sink does not change an existing table's key; drop it or load into another table",
		ErrSchemaRefused, e.name(), e.cur.Keys, strings.Join(e.cur.KeyColumns, ", "), strings.Join(in.Keys, ", "))
}

func (e *TableEvolver) record(kind, ddl string) {
	if e.Evidence != nil {
		e.Evidence(kind, ddl)
	}
}

func (e *TableEvolver) logf(msg string, in Incoming, kv ...any) {
	if e.Log == nil {
		return
	}
	e.Log.Info(msg, append([]any{"table", e.name(), "topic", in.Topic, "partition", in.Partition, "offset", in.Offset}, kv...)...)
}

func columnNames(t *schema.Table) []schema.Column { return slices.Clone(t.Columns) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
