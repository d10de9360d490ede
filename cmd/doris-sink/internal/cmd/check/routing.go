package check

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// tableShower is the part of the Doris client the routed-table checks use.
type tableShower interface {
	ShowCreateTable(ctx context.Context, db, table string) (*schema.Table, error)
}

// routedTables returns the "db.table" names the routing keys name up
// front (routing.topic_tables values, routing.default_table) other than
// doris.table, sorted, each once.
func routedTables(cfg *config.Config) []string {
	main := cfg.Doris.Database + "." + cfg.Doris.Table
	var out []string
	add := func(t string) {
		if t == "" {
			return
		}
		if !strings.Contains(t, ".") {
			t = cfg.Doris.Database + "." + t
		}
		if t != main && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, t := range cfg.Routing.TopicTables {
		add(t)
	}
	add(cfg.Routing.DefaultTable)
	slices.Sort(out)
	return out
}

// checkRouted inspects every table the routing names up front as the main
// table is inspected (exists; what the delivery mode means for its model,
// sequence column and deletes), and says that tables named by records
// (field, header, Debezium source) are not known before they arrive.
func checkRouted(ctx context.Context, r *Report, client tableShower, cfg *config.Config) {
	for _, name := range routedTables(cfg) {
		db, table, _ := strings.Cut(name, ".")
		t, err := client.ShowCreateTable(ctx, db, table)
		switch {
		case errors.Is(err, doris.ErrNotFound):
			r.add(Fail, "routed table", "table %s (routing) not found: %v", name, err)
			continue
		case err != nil:
			r.add(Fail, "routed table", "SHOW CREATE TABLE %s failed: %v", name, err)
			continue
		}
		r.add(OK, "routed table", "%s exists: %s", name, describe(t))
		c := *cfg
		c.Doris.Database, c.Doris.Table = db, table
		sub := &Report{}
		checkModel(sub, &c, t)
		for _, l := range sub.Lines {
			r.add(l.Status, name+": "+l.Check, "%s", l.Detail)
		}
	}
	if ro := cfg.Routing; ro.TableField != "" || ro.TableHeader != "" || ro.DebeziumTemplate != "" {
		r.add(Warn, "routed tables", "routing.table_field/table_header/debezium_template name tables in the records: "+
			"they are not known before the records arrive and are not checked here; each must exist (a load into a "+
			"missing table fails the checkpoint)")
	}
}
