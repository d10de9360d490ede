package kafka

import (
	"context"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// TableSchemaReader reads a table's schema (SHOW CREATE TABLE; the
// *doris.Client).
type TableSchemaReader interface {
	ShowCreateTable(ctx context.Context, db, table string) (*schema.Table, error)
}

// routedCheckOpt is WithRoutedRowCheck's configuration.
type routedCheckOpt struct {
	tr    TableSchemaReader
	db    string
	props func(table string) map[string]string
}

// WithRoutedRowCheck pre-checks routed rows too (routing.*, with a
// dead-letter topic), like WithRowCheck does doris.table's: the first row
// routed to a table reads that table through tr (db is the database of an
// unqualified name) and builds its check with props(table), the table's
// Stream Load properties (nil props: none). A table that cannot be read
// (missing, Doris down) is not pre-checked for the rest of the run
// (logged once): bisection alone finds the rows Doris refuses there. At
// most maxRoutedChecks tables are checked.
func WithRoutedRowCheck(tr TableSchemaReader, db string, props func(table string) map[string]string) Opt {
	return optFunc(func(o *options) {
		if tr == nil {
			o.routedCheck = nil
			return
		}
		o.routedCheck = &routedCheckOpt{tr: tr, db: db, props: props}
	})
}

// maxRoutedChecks bounds the routed tables the Connector keeps a
// pre-check of; rows of later tables are not pre-checked.
const maxRoutedChecks = 1024

// routedReadTimeout bounds the read of a routed table's schema.
const routedReadTimeout = 10 * time.Second

// checkFor returns the pre-check of table ("": doris.table), nil when its
// rows are not pre-checked.
func (c *Connector) checkFor(ctx context.Context, table string) *rowCheck {
	if table == "" {
		return c.check
	}
	if c.o.routedCheck == nil || c.cfg.DeadLetterTopic == "" {
		return nil
	}
	if rc, ok := c.routedChecks[table]; ok {
		return rc
	}
	if c.routedChecks == nil {
		c.routedChecks = map[string]*rowCheck{}
	}
	if len(c.routedChecks) >= maxRoutedChecks {
		return nil
	}
	rc := c.routedRowCheck(ctx, table)
	c.routedChecks[table] = rc
	if len(c.routedChecks) == maxRoutedChecks {
		c.o.logger.Warn("rows of further routed tables are not pre-checked: the pre-check keeps at most this many tables",
			"tables", maxRoutedChecks)
	}
	return rc
}

// routedRowCheck reads table and builds its pre-check (nil: off, logged).
func (c *Connector) routedRowCheck(ctx context.Context, table string) *rowCheck {
	rc := c.o.routedCheck
	db, name := rc.db, table
	if d, t, ok := strings.Cut(table, "."); ok {
		db, name = d, t
	}
	ctx, cancel := context.WithTimeout(ctx, routedReadTimeout)
	defer cancel()
	t, err := rc.tr.ShowCreateTable(ctx, db, name)
	if err != nil {
		c.o.logger.Warn("rows routed to the table are not pre-checked (cannot read it): Doris alone decides which it refuses",
			"table", db+"."+name, "err", err)
		return nil
	}
	var props map[string]string
	if rc.props != nil {
		props = rc.props(table)
	}
	check, why := newRowCheck(t, props, c.cfg.Format, c.cfg.Delete)
	if check == nil {
		c.o.logger.Warn("rows routed to the table are not pre-checked: Doris alone decides which it refuses",
			"table", db+"."+name, "why", why)
		return nil
	}
	c.o.logger.Info("rows routed to the table are pre-checked against it: those Doris would refuse are dead-lettered",
		"table", db+"."+name, "strict_mode", check.strict)
	return check
}

// refreshCheck rebuilds the pre-check of table ("": doris.table, the main
// check; a routed table: its check is dropped and built again from
// SHOW CREATE TABLE on its next row) from its columns after schema
// evolution changed it (Apply): a widened VARCHAR, or an added column, is
// checked by its new definition from the next row on. No-op when the table
// is not pre-checked.
func (c *Connector) refreshCheck(table string, cols []schema.Column) {
	if table != "" {
		delete(c.routedChecks, table)
		return
	}
	if c.check == nil {
		return
	}
	name := ""
	if c.o.checkTable != nil {
		name = c.o.checkTable.Name
	}
	check, why := newRowCheck(&schema.Table{Name: name, Columns: cols}, c.o.checkProps, c.cfg.Format, c.cfg.Delete)
	if check == nil {
		c.o.logger.Warn("rows are no longer pre-checked after the schema change: Doris alone decides which it refuses", "why", why)
	}
	c.check = check
}
