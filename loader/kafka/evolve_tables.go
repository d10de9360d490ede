package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// WithTableEvolvers makes the Connector keep every routed table able to
// load its rows (Config.Routing; doris.create_table and
// records.schema_evolution under routing): newEvolver returns the
// SchemaEvolver of a table ("db.table" or a table of the sink's database,
// as routing names it), called once, on the table's first record. Each
// table gets its own converter state too: its own Connect schema tracker
// (one Debezium topic carrying many tables is not a schema change per
// record: the last schema block is kept per table), its known columns and
// its value conversions. A table's change cuts the open checkpoint only
// when that checkpoint has rows of that table (a table created on first
// sight has none, and the loads of the other tables do not depend on its
// schema). Needs Config.Routing; WithSchemaEvolver is the one-table form.
func WithTableEvolvers(newEvolver func(table string) SchemaEvolver) Opt {
	return optFunc(func(o *options) { o.tableEvolvers = newEvolver })
}

// WithTableDeletes gives each routed table its own delete handling
// (tables.<pattern>.delete.*): deletesFor returns the DeleteConfig of a
// table (as routing names it; return Config.Delete for the tables without
// their own), called once, on the table's first record; the records of
// that table are converted with it. FormatJSON only, like Config.Delete;
// the table's loader Target needs DeleteProperties of it. A tombstone is
// routed like any record: only routing.topic_tables or a default table
// route one (it has no value to read a table from). Needs Config.Routing.
func WithTableDeletes(deletesFor func(table string) DeleteConfig) Opt {
	return optFunc(func(o *options) { o.tableDeletes = deletesFor })
}

// errEvolversNeedRouting and errEvolverWithRouting are New's refusals of
// the two evolver options used against the routing they need.
var (
	errEvolversNeedRouting = errors.New("kafka connector: WithTableEvolvers and WithTableDeletes need Config.Routing (use WithSchemaEvolver, Config.Delete for one table)")
	errEvolverWithRouting  = errors.New("kafka connector: WithSchemaEvolver follows one table and Config.Routing sends records to several: use WithTableEvolvers")
)

// tableEvo is the schema evolution state of one table: its evolver, the
// converter of its records and the change its current record waits for.
type tableEvo struct {
	table   string
	ev      SchemaEvolver
	conv    *Converter
	pending *Incoming // the change a record needs, kept until applied
	gen     uint64    // evoState.gen when the table last got a row
}

// evoState is the Connector's schema evolution state (Run goroutine).
type evoState struct {
	// main is the state of the sink's own table (WithSchemaEvolver);
	// nil: none.
	main *tableEvo
	// perTable is set when each routed table has its own converter
	// (WithTableEvolvers or WithTableDeletes).
	perTable bool
	// newFor makes the evolver of a routed table (WithTableEvolvers); nil:
	// routed tables are not evolved.
	newFor func(table string) SchemaEvolver
	// delFor gives a routed table's delete handling (WithTableDeletes);
	// nil: the Connector's.
	delFor func(table string) DeleteConfig
	tables map[string]*tableEvo
	// gen counts the resets of the open checkpoint's rows (decided or
	// rewound): a table whose gen is current has rows in it.
	gen uint64
}

// reset is called whenever the open checkpoint's counters are reset.
func (s *evoState) reset() { s.gen++ }

// wrote notes that te's table got a row in the open checkpoint.
func (s *evoState) wrote(te *tableEvo) {
	if te != nil {
		te.gen = s.gen
	}
}

// openRows reports whether the open checkpoint has rows that a change of
// te's table must not be applied under: for the one-table form any row,
// for a routed table a row of that table.
func (c *Connector) openRows(te *tableEvo) bool {
	if c.pend.rows == 0 {
		return false
	}
	return te == c.evo.main || te.gen == c.evo.gen
}

// convert converts r and routes it: its row, its table ("" without
// routing) and the evolution state of that table (nil: none). Under
// routing the value is decoded once (Converter.decode: the registry
// formats' decoded JSON, which routing reads like a JSON value) and
// converted from that. With per-table state the record is routed first
// and converted by its table's converter; a record that cannot be routed
// reports its conversion error first, as without per-table state (a
// tombstone stays a tombstone).
func (c *Connector) convert(ctx context.Context, r *kgo.Record) (row []byte, table string, te *tableEvo, err error) {
	if !c.cfg.Routing.Enabled() {
		row, err = c.conv.ConvertContext(ctx, r)
		return row, "", c.evo.main, err
	}
	v, err := c.conv.decode(ctx, r)
	if err != nil {
		return nil, "", nil, err
	}
	if !c.evo.perTable {
		row, err = c.conv.convertDecoded(ctx, r, v)
		if err == nil {
			table, err = c.cfg.Routing.route(r, v)
		}
		return row, table, c.evo.main, err
	}
	table, err = c.cfg.Routing.route(r, v)
	if err != nil {
		if _, cerr := c.conv.convertDecoded(ctx, r, v); cerr != nil {
			return nil, "", nil, cerr
		}
		return nil, "", nil, err
	}
	te = c.evo.tables[table]
	if te == nil {
		if te, err = c.newTableEvo(table); err != nil {
			return nil, "", nil, err
		}
	}
	row, err = te.conv.convertDecoded(ctx, r, v)
	if te.ev == nil {
		return row, table, nil, err // nothing to evolve
	}
	return row, table, te, err
}

// newTableEvo makes the per-table state of table on its first record.
func (c *Connector) newTableEvo(table string) (*tableEvo, error) {
	del := c.conv.del
	if c.evo.delFor != nil {
		del = c.evo.delFor(table)
		if err := del.validate(c.conv.format); err != nil {
			return nil, fmt.Errorf("table %s: %w", table, err)
		}
	}
	var unknown *atomic.Int64
	te := &tableEvo{table: table}
	if c.evo.newFor != nil {
		te.ev, unknown = c.evo.newFor(table), &c.metrics.UnknownFields
	}
	te.conv = c.conv.forTable(unknown, del)
	if c.evo.tables == nil {
		c.evo.tables = map[string]*tableEvo{}
	}
	c.evo.tables[table] = te
	return te, nil
}

// forTable returns a Converter of the same settings as c (newConverter:
// the format, metadata columns, decoder, envelope and whatever else c was
// made with), deleting with del, with its own per-table state: a fresh
// schema tracker (when c tracks schemas) and, with unknown set, a field
// watch that knows no table column yet (the table's evolver names its
// columns), counting unknown fields in unknown without warning.
func (c *Converter) forTable(unknown *atomic.Int64, del DeleteConfig) *Converter {
	s := c.convSettings
	s.del = del
	n := newConverter(s)
	if c.schemas != nil {
		n.schemas = &schemaTracker{}
	}
	if unknown != nil {
		n.WatchFields([]string{}, unknown, nil)
	}
	return n
}
