package check

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
)

type fakeTables map[string]string // db.table → DDL

func (f fakeTables) ShowCreateTable(_ context.Context, db, table string) (*schema.Table, error) {
	ddl, ok := f[db+"."+table]
	if !ok {
		return nil, fmt.Errorf("table %s.%s: %w", db, table, doris.ErrNotFound)
	}
	return schema.ParseCreateTable(ddl)
}

// check inspects every table the routing names up front: a missing one
// fails, each existing one gets the model lines under its own name, and
// tables named by records are said to be unchecked.
func TestCheckRoutedTables(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Doris: config.Doris{Database: "demo", Table: "t"},
		Delivery: config.Delivery{Guarantee: config.ExactlyOnce},
		Routing: config.Routing{TopicTables: map[string]string{"a": "u", "b": "other.missing", "c": "t"},
			DefaultTable: "demo.u", TableField: "kind"}}
	if got := routedTables(cfg); strings.Join(got, ",") != "demo.u,other.missing" {
		t.Fatalf("routedTables = %v", got)
	}
	f := fakeTables{"demo.u": "CREATE TABLE u (id BIGINT) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"}
	var r Report
	checkRouted(context.Background(), &r, f, cfg)
	var text []string
	for _, l := range r.Lines {
		text = append(text, l.Status+" "+l.Check+" "+l.Detail)
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{
		"OK routed table demo.u exists: UNIQUE KEY(id)",
		"WARN demo.u: late events",
		"FAIL routed table table other.missing (routing) not found",
		"WARN routed tables routing.table_field",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("check lines lack %q:\n%s", want, all)
		}
	}
	if r.Failed != 1 {
		t.Errorf("failed %d, want 1", r.Failed)
	}
}
