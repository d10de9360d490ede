package check

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
)

// A missing table is OK when doris.create_table will create it, a failure
// otherwise.
func TestCheckMissingTableWithCreateTable(t *testing.T) {
	t.Parallel()
	for _, create := range []bool{true, false} {
		_, client := cmdutil.NewTestDoris(t, "CREATE TABLE other (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
		f, _, _ := cmdutil.NewTestFactory(false)
		f.NewDoris = func(*config.Config, *slog.Logger) (*doris.Client, error) { return client, nil } // checkDoris closes it
		cfg := &config.Config{Doris: config.Doris{FE: []string{"http://127.0.0.1:8030"}, MySQL: "127.0.0.1:9030", User: "root",
			Database: "demo", Table: "cust", CreateTable: config.CreateTable{Enabled: create}},
			Records: config.Records{Format: config.RecordsDebezium}, Delivery: config.Delivery{Guarantee: config.ExactlyOnce}}
		r := &Report{}
		checkDoris(context.Background(), r, f, cfg)
		var line *Line
		for i := range r.Lines {
			if r.Lines[i].Check == "doris table" {
				line = &r.Lines[i]
			}
		}
		switch {
		case line == nil:
			t.Fatalf("create_table=%v: no table line in %+v", create, r.Lines)
		case create && (line.Status != OK || !strings.Contains(line.Detail, "doris.create_table creates it")):
			t.Errorf("create_table on: %+v", line)
		case !create && line.Status != Fail:
			t.Errorf("create_table off: %+v", line)
		}
	}
}
