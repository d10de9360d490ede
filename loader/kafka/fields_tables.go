package kafka

import (
	"context"
	"log/slog"
)

// WithRoutedTableColumns names, for each routed table (Config.Routing),
// the JSON fields its loads read: columns is called once per table, on
// its first row, with the table as routing names it ("db.table" or a
// table of the sink's database), and returns the table's columns (or the
// names of its Stream Load "columns" header); nil leaves that table
// unchecked (it cannot be read, or its fields are picked by jsonpaths).
// Every top-level field of a routed row that is none of them is counted in
// Metrics.UnknownFields and named once per table in a warning, as
// WithTableColumns does for one table. With routing, WithTableColumns
// alone checks nothing: the columns of doris.table are not those of the
// tables the rows go to. Tables with their own schema evolver
// (WithTableEvolvers) are watched by their converter instead; per-table
// deletes alone (WithTableDeletes) give a converter that watches nothing,
// so those tables are watched here.
func WithRoutedTableColumns(columns func(ctx context.Context, table string) []string) Opt {
	return optFunc(func(o *options) { o.routedColumns = columns })
}

// routedFields is the unknown-field watch of the routed tables: one
// fieldWatch per table, built on the table's first row. Used by the Run
// goroutine only.
type routedFields struct {
	columns func(ctx context.Context, table string) []string
	watches map[string]*fieldWatch // nil value: the table is not checked
}

// watchRouted checks the top-level fields of row, routed to table, against
// that table's columns. The steady state is one map lookup and the scan the
// one-table watch does.
func (c *Connector) watchRouted(ctx context.Context, table string, row []byte) {
	rf := c.routedFields
	if rf == nil || table == "" {
		return
	}
	w, ok := rf.watches[table]
	if !ok {
		w = c.newRoutedWatch(ctx, table)
		rf.watches[table] = w
	}
	if w != nil {
		w.scan(row)
	}
}

// newRoutedWatch builds table's watch from its columns (nil: unchecked).
func (c *Connector) newRoutedWatch(ctx context.Context, table string) *fieldWatch {
	cols := c.routedFields.columns(ctx, table)
	if cols == nil {
		return nil
	}
	log := c.o.logger
	w := c.conv.newFieldWatch(cols, &c.metrics.UnknownFields, func(name string) {
		log.Warn("JSON field is not a column of the table it is routed to: Doris ignores it, its values are not loaded "+
			"(named once per table; every occurrence is counted in unknown_fields)", "field", name, slog.String("table", table))
	})
	return w
}
