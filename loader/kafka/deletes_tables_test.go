package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// Each routed table deletes its own way (WithTableDeletes): records of
// table "ud" whose field "op" is "del" delete their key; the same field in
// table "uk" is loaded as a row. The loader gives "ud" the hidden_columns
// its delete sign needs.
func TestRoutedTablesDeleteTheirOwnWay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	for _, tbl := range []string{"ud", "uk"} {
		ddl := "CREATE TABLE " + tbl + " (id BIGINT, op VARCHAR(8)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 " +
			`PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
		if err := e.srv.CreateTable(testDB, ddl); err != nil {
			t.Fatal(err)
		}
	}
	var recs []*kgo.Record
	for _, tbl := range []string{"ud", "uk"} {
		for i := 1; i <= 3; i++ {
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d,"op":"add","t":%q}`, i, tbl)})
		}
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":2,"op":"del","t":%q}`, tbl)})
	}
	e.produce(recs...)
	del := DeleteConfig{Field: "op", Value: "del"}
	owner := checkpoint.Owner{Job: "kafka-test", DB: testDB, Table: e.table, Source: "kafka:" + testTopic, Writer: "0"}
	st, err := checkpoint.OpenFile(e.dir, owner)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := loader.New(e.client, loader.Config{Job: owner.Job, DB: testDB, Table: e.table, Source: owner.Source,
		Format: "json", Store: st, LedgerDir: e.dir,
		TargetFor: func(_, table string) loader.Target {
			if table == "ud" {
				return loader.Target{Properties: DeleteProperties(del)}
			}
			return loader.Target{}
		},
		Retry: loader.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxElapsed: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.Routing = Routing{TableField: "t"}
	c, err := New(cfg, ld, WithRecoverBackoff(0, 0), WithTableDeletes(func(table string) DeleteConfig {
		if table == "ud" {
			return del
		}
		return DeleteConfig{}
	}))
	if err != nil {
		ld.Close(context.Background())
		t.Fatal(err)
	}
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for table, want := range map[string]string{"ud": "[[1 add] [3 add]]", "uk": "[[1 add] [2 del] [3 add]]"} {
		if got := e.rowsOf(table); got != want {
			t.Errorf("%s rows %s, want %s", table, got, want)
		}
	}
}

// A table's delete handling that the record format cannot apply stops the
// run at the table's first record, naming the table.
func TestRoutedTableDeletesNeedJSON(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	e.produce(shopRecord("orders", shopOrders, "c", 1, `{"id":1,"amount":10}`))
	ld := e.loader(nil)
	cfg := e.config()
	cfg.Routing = Routing{DebeziumTemplate: "{db}_{table}"}
	c, err := New(cfg, ld, WithRecoverBackoff(0, 0), WithTableDeletes(func(string) DeleteConfig { return DeleteConfig{Tombstones: true} }))
	if err != nil {
		t.Fatal(err)
	}
	err = e.runToEnd(ctxFor(t), c)
	if err == nil || !strings.Contains(err.Error(), "table shop_orders") || !strings.Contains(err.Error(), "records.format json") {
		t.Fatalf("Run: %v, want a refusal naming the table and the format", err)
	}
}
