package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
)

// SchemaEvolver keeps the target table able to load the records' rows
// (doris.create_table, records.schema_evolution; TableEvolver is the Doris
// implementation). The Connector asks it only when a record's Connect schema
// block differs from the record before it, or (AddsColumns) when a row has a
// field that is not a known column: the steady state costs nothing.
type SchemaEvolver interface {
	// AddsColumns reports whether new fields of schema-less rows may add
	// columns; when false only Connect schemas are looked at.
	AddsColumns() bool
	// Needs reports whether the table must be created or changed before a
	// row of in loads, and the table's columns as known now. It may read
	// the table's schema but never changes it.
	Needs(ctx context.Context, in Incoming) (columns []schema.Column, need bool, err error)
	// Apply creates the table or changes it for in, idempotently (what is
	// done already is not done again), and returns the columns after.
	Apply(ctx context.Context, in Incoming) (columns []schema.Column, err error)
}

// Incoming is the schema of a record the table may not hold yet.
type Incoming struct {
	// Topic, Partition and Offset name the record.
	Topic     string
	Partition int32
	Offset    int64
	// Fields are the row's fields: with FromSchema the whole row image of a
	// Connect schema, else the row's unknown fields with inferred types.
	Fields []cdcschema.Field
	// FromSchema is set when Fields come from the record's Connect schema.
	FromSchema bool
	// Keys are the record key's fields (the source's primary key), when the
	// key carries a Connect schema; nil otherwise.
	Keys []string
}

// WithSchemaEvolver makes the Connector create or change the table through
// ev before the load that needs it (docs/configuration.md "Schema
// evolution"). When a change is needed while the open checkpoint has rows
// (its Stream Load was planned with the old schema, which ignores the new
// fields, docs/doris-facts.md §13), that checkpoint is decided first and
// the record starts the next one. Default: none.
func WithSchemaEvolver(ev SchemaEvolver) Opt {
	return optFunc(func(o *options) { o.evolver = ev })
}

// evolve runs schema evolution for the converted row of r (converted by
// te.conv, the converter of r's table), before it is written, and returns
// the row to write (converted again when the value conversions changed).
// When the table must change and the open checkpoint has rows of it, cut
// decides them first (their Stream Load was planned with the old schema).
// A *cdcschema.TypeChangeError or ErrSchemaRefused is terminal; other
// failures wrap loader.ErrNeedRecover (retried). The row stays valid
// across cut: cut converts nothing.
func (c *Connector) evolve(ctx context.Context, te *tableEvo, r *kgo.Record, row []byte, cut func() error) ([]byte, error) {
	if te.pending == nil {
		in, ok := c.incoming(te, r, row)
		if !ok {
			return row, nil
		}
		cols, need, err := te.ev.Needs(ctx, in)
		var tce *cdcschema.TypeChangeError
		switch {
		case errors.As(err, &tce):
			need = true // decide the rows before r, then stop at r (Apply fails the same way)
		case err != nil:
			return nil, c.evolveErr(te, r, err)
		case !need:
			return c.adopt(te, r, row, in, cols)
		}
		te.pending = &in
	}
	if c.openRows(te) {
		if err := cut(); err != nil {
			return nil, err // te.pending stays: the re-read applies it
		}
	}
	in := *te.pending
	cols, err := te.ev.Apply(ctx, in)
	if err != nil {
		return nil, c.evolveErr(te, r, err)
	}
	te.pending = nil
	c.refreshCheck(te.table, cols)
	return c.adopt(te, r, row, in, cols)
}

// adopt makes the table's converter know the table's columns and, for a
// Connect schema, rewrite the values the columns cannot parse as Debezium
// encodes them (SetValueConversions); r is converted again when that
// changed its row.
func (c *Connector) adopt(te *tableEvo, r *kgo.Record, row []byte, in Incoming, cols []schema.Column) ([]byte, error) {
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.Name
	}
	conv := te.conv
	conv.KnowFields(names)
	if !in.FromSchema {
		return row, nil
	}
	had := conv.vals != nil
	conv.SetValueConversions(in.Fields, cols)
	if !had && conv.vals == nil {
		return row, nil
	}
	return conv.Convert(r) // the same schema block: no change is seen again
}

// incoming describes r's schema when it may need evolution.
func (c *Connector) incoming(te *tableEvo, r *kgo.Record, row []byte) (Incoming, bool) {
	in := Incoming{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
	if block, ok := te.conv.SchemaChanged(); ok {
		fields, err := cdcschema.RowFieldsOfSchema(block)
		if err == nil {
			in.Fields, in.FromSchema = fields, true
			in.Keys, _ = cdcschema.KeyFields(r.Key)
			return in, true
		}
		c.o.logger.Warn("schema evolution: the record's Connect schema is not a Debezium row schema; looking at its fields instead",
			"topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
	}
	if !te.ev.AddsColumns() || !te.conv.HasUnknownFields() {
		return in, false
	}
	fields, err := te.conv.unknownFields(row)
	if err != nil || len(fields) == 0 {
		return in, false
	}
	in.Fields = fields
	return in, true
}

// evolveErr wraps a schema evolution failure with the record's position;
// the table's next record's schema is looked at again.
func (c *Connector) evolveErr(te *tableEvo, r *kgo.Record, err error) error {
	topic, part, off := r.Topic, r.Partition, r.Offset
	if p := te.pending; p != nil { // the record that needed the change (r may be an earlier one, re-read)
		topic, part, off = p.Topic, p.Partition, p.Offset
	}
	te.pending = nil
	te.conv.forgetSchema()
	var tce *cdcschema.TypeChangeError
	if errors.As(err, &tce) || errors.Is(err, ErrSchemaRefused) {
		return fmt.Errorf("schema evolution at %s/%d@%d: %w", topic, part, off, err)
	}
	return fmt.Errorf("schema evolution at %s/%d@%d: %w (retrying: %w)", topic, part, off, err, loader.ErrNeedRecover)
}
