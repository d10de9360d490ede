package kafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// The source tables of one Debezium topic (a whole "shop" database) and
// their row schemas; items gains a column mid-stream.
var (
	shopCustomers = []dbzField{{"id", "int64", ""}, {"name", "string", ""}}
	shopOrders    = []dbzField{{"id", "int64", ""}, {"amount", "int32", ""}}
	shopItems     = []dbzField{{"id", "int64", ""}, {"sku", "string", ""}}
	shopItemsV2   = append(slices.Clone(shopItems), dbzField{"color", "string", ""})
)

// shopRecord is a Debezium event of source table shop.<table> with schema:
// op c with row as "after", or op d with row as "before".
func shopRecord(table string, fields []dbzField, op string, id int, row string) *kgo.Record {
	before, after := "null", row
	if op == "d" {
		before, after = row, "null"
	}
	v := `{"schema":` + dbzSchema(fields) + `,"payload":{"before":` + before + `,"after":` + after + `,"op":"` + op +
		`","source":{"db":"shop","table":"` + table + `"}}}`
	return &kgo.Record{Key: fmt.Appendf(nil, customerKey, id), Value: []byte(v)}
}

// countingEvolver counts the Needs calls of a routed table's evolver.
type countingEvolver struct {
	SchemaEvolver
	needs *atomic.Int64
}

func (c countingEvolver) Needs(ctx context.Context, in Incoming) ([]schema.Column, bool, error) {
	c.needs.Add(1)
	return c.SchemaEvolver.Needs(ctx, in)
}

// shopConnector runs the "shop" topic routed by {db}_{table}, each table
// created from its first record's schema and evolved on its own; evidence
// receives every change (nil: the loader's ledger).
func (e *env) shopConnector(ld *loader.Loader, rec *recorder, needs *atomic.Int64,
	evidence func(table, kind, ddl string)) *Connector {
	e.t.Helper()
	return e.shopConnectorWith(ld, rec, needs, evidence, 100)
}

// shopConnectorRows is shopConnector with a row cap per checkpoint.
func (e *env) shopConnectorRows(ld *loader.Loader, rec *recorder, needs *atomic.Int64, maxRows int64) *Connector {
	e.t.Helper()
	return e.shopConnectorWith(ld, rec, needs, nil, maxRows)
}

func (e *env) shopConnectorWith(ld *loader.Loader, rec *recorder, needs *atomic.Int64,
	evidence func(table, kind, ddl string), maxRows int64) *Connector {
	e.t.Helper()
	if evidence == nil {
		evidence = ld.RecordTableChangeOf
	}
	cfg := e.config()
	cfg.CheckpointMaxRows = maxRows
	cfg.Routing = Routing{DebeziumTemplate: "{db}_{table}"}
	c, err := New(cfg, ld, WithRecoverBackoff(0, 0), WithOnCheckpoint(rec.add),
		WithTableEvolvers(func(table string) SchemaEvolver {
			ev := &TableEvolver{DDL: e.client, DB: testDB, Table: table, Create: true, AddColumns: true,
				TableOptions: cdcschema.TableOptions{Buckets: 1, Replication: 1},
				Evidence:     func(kind, ddl string) { evidence(table, kind, ddl) }}
			return countingEvolver{SchemaEvolver: ev, needs: needs}
		}))
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// rowsOf returns the rows of table as text.
func (e *env) rowsOf(table string) string {
	e.t.Helper()
	rows, err := e.srv.Rows(testDB, table)
	if err != nil {
		e.t.Fatal(err)
	}
	return fmt.Sprint(rows)
}

// tableChanges returns the table_created and schema_changed entries of the
// ledger as "event table: first DDL line".
func (e *env) tableChanges() []string {
	e.t.Helper()
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		if en.Event == ledger.EventTableCreated || en.Event == ledger.EventSchemaChanged {
			out = append(out, en.Event+" "+en.DB+"."+en.Table+": "+firstLine(en.Note))
		}
	}
	return out
}

// One Debezium topic carrying three source tables: each routed table is
// created from its own first record's schema before its first load, the
// interleaved records are not a schema change each (the schema block is
// tracked per table: Needs runs once per table plus once for the change),
// creating a table does not cut the open checkpoint, and items' new column
// cuts only because the open checkpoint has rows of items. Deletes (op d)
// delete. The ledger names each table's change.
func TestRoutedTablesCreatedAndEvolvedPerTable(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	e.produce(
		shopRecord("customers", shopCustomers, "c", 1, `{"id":1,"name":"ann"}`),
		shopRecord("orders", shopOrders, "c", 1, `{"id":1,"amount":10}`),
		shopRecord("customers", shopCustomers, "c", 2, `{"id":2,"name":"bob"}`),
		shopRecord("items", shopItems, "c", 1, `{"id":1,"sku":"a-1"}`),
		shopRecord("orders", shopOrders, "c", 2, `{"id":2,"amount":20}`),
		shopRecord("items", shopItemsV2, "c", 2, `{"id":2,"sku":"b-2","color":"red"}`),
		shopRecord("customers", shopCustomers, "d", 1, `{"id":1,"name":"ann"}`),
		shopRecord("items", shopItemsV2, "c", 3, `{"id":3,"sku":"c-3","color":"blue"}`),
		shopRecord("orders", shopOrders, "c", 3, `{"id":3,"amount":30}`),
	)
	ld := e.loader(nil)
	var rec recorder
	var needs atomic.Int64
	c := e.shopConnector(ld, &rec, &needs, func(table, kind, ddl string) {
		if kind == ledger.EventTableCreated {
			// Created before its first load: no label of it is announced yet.
			b, err := os.ReadFile(filepath.Join(e.dir, checkpoint.FileName))
			if err != nil && !os.IsNotExist(err) {
				t.Error(err)
			}
			if strings.Contains(string(b), `"`+testDB+"."+table+`"`) {
				t.Errorf("table %s created after its label was announced: store %s", table, b)
			}
		}
		ld.RecordTableChangeOf(table, kind, ddl)
	})
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for table, want := range map[string]string{
		"shop_customers": "[[2 bob]]",
		"shop_orders":    "[[1 10] [2 20] [3 30]]",
		"shop_items":     "[[1 a-1 <nil>] [2 b-2 red] [3 c-3 blue]]",
	} {
		if got := e.rowsOf(table); got != want {
			t.Errorf("%s rows %s, want %s", table, got, want)
		}
	}
	if n := needs.Load(); n != 4 {
		t.Errorf("evolvers asked %d times, want 4 (each table's first record, items' change)", n)
	}
	st := rec.stats()
	if len(st) != 2 || st[0].Rows != 5 || st[1].Rows != 4 {
		t.Errorf("checkpoints %+v, want 2: the 5 rows before items' change, then the 4 after", st)
	}
	want := []string{
		"table_created db.shop_customers: CREATE TABLE IF NOT EXISTS `db`.`shop_customers` (",
		"table_created db.shop_orders: CREATE TABLE IF NOT EXISTS `db`.`shop_orders` (",
		"table_created db.shop_items: CREATE TABLE IF NOT EXISTS `db`.`shop_items` (",
		"schema_changed db.shop_items: ALTER TABLE `db`.`shop_items` ADD COLUMN `color` string NULL",
	}
	if got := e.tableChanges(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ledger changes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	e.checkNoRunningTxn()
}

// A table's change does not cut a checkpoint that has no rows of that
// table: orders' new column comes while the open checkpoint holds only
// customers rows, so everything is one checkpoint.
func TestRoutedTableChangeWithoutItsRowsDoesNotCut(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	ordersV2 := append(slices.Clone(shopOrders), dbzField{"note", "string", ""})
	e.produce(
		shopRecord("orders", shopOrders, "c", 1, `{"id":1,"amount":10}`),
		shopRecord("customers", shopCustomers, "c", 1, `{"id":1,"name":"ann"}`),
	)
	ld := e.loader(nil)
	var rec recorder
	var needs atomic.Int64
	c := e.shopConnector(ld, &rec, &needs, nil)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.produce(
		shopRecord("customers", shopCustomers, "c", 2, `{"id":2,"name":"bob"}`),
		shopRecord("orders", ordersV2, "c", 2, `{"id":2,"amount":20,"note":"gift"}`),
	)
	ld2 := e.loader(nil)
	var rec2 recorder
	c2 := e.shopConnector(ld2, &rec2, &needs, nil)
	if err := e.runToEnd(ctxFor(t), c2); err != nil {
		t.Fatalf("Run 2: %v", err)
	}
	if st := rec2.stats(); len(st) != 1 || st[0].Rows != 2 {
		t.Errorf("second run's checkpoints %+v, want one of 2 rows (orders had no rows open when it changed)", st)
	}
	if got := e.rowsOf("shop_orders"); got != "[[1 10 <nil>] [2 20 gift]]" {
		t.Errorf("shop_orders rows %s", got)
	}
}

// A crash between one table's ALTER and the commit of the checkpoint
// decided for it, while the other two tables have rows in that checkpoint
// too: the restart commits the decided checkpoint (every table's txn),
// finds items' column there (no second ALTER) and loads the rest once; no
// txn lingers.
func TestRoutedSchemaChangeCrashBetweenAlterAndCommit(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	e.produce(
		shopRecord("customers", shopCustomers, "c", 1, `{"id":1,"name":"ann"}`),
		shopRecord("orders", shopOrders, "c", 1, `{"id":1,"amount":10}`),
		shopRecord("items", shopItems, "c", 1, `{"id":1,"sku":"a-1"}`),
		shopRecord("items", shopItemsV2, "c", 2, `{"id":2,"sku":"b-2","color":"red"}`),
		shopRecord("customers", shopCustomers, "c", 2, `{"id":2,"name":"bob"}`),
		shopRecord("orders", shopOrders, "d", 1, `{"id":1,"amount":10}`),
	)
	fps := loader.NewFailpoints()
	hold, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(3)) // the commits of checkpoint 1's three txns
	if err != nil {
		t.Fatal(err)
	}
	ld := e.loader(fps)
	var rec recorder
	var needs atomic.Int64
	var crash *loader.Handle
	c := e.shopConnector(ld, &rec, &needs, func(table, kind, ddl string) {
		ld.RecordTableChangeOf(table, kind, ddl)
		if kind == ledger.EventSchemaChanged {
			// items' ALTER is done; checkpoint 1 (three tables) is decided,
			// its commit held.
			if crash, err = fps.Arm(loader.FailAfterAnnounce, loader.Crash()); err != nil {
				t.Error(err)
			}
		}
	})
	err = e.runToEnd(ctxFor(t), c)
	hold.Release()
	if !errors.Is(err, loader.ErrCrashed) || crash == nil || crash.Hits() != 1 {
		t.Fatalf("Run: %v, want the crash after the ALTER", err)
	}
	if hold.Hits() == 0 {
		t.Fatal("the commits of checkpoint 1 were not held")
	}
	if st := rec.stats(); len(st) != 1 || st[0].Rows != 3 {
		t.Fatalf("checkpoints before the crash %+v, want checkpoint 1 of the 3 tables' rows", st)
	}
	for _, table := range []string{"shop_customers", "shop_orders", "shop_items"} {
		if got := e.rowsOf(table); got != "[]" {
			t.Fatalf("%s holds %s before the restart (checkpoint 1 must not be committed yet)", table, got)
		}
	}

	ld2 := e.loader(nil)
	var rec2 recorder
	c2 := e.shopConnector(ld2, &rec2, &needs, nil)
	if err := e.runToEnd(ctxFor(t), c2); err != nil {
		t.Fatalf("Run after restart: %v", err)
	}
	for table, want := range map[string]string{
		"shop_customers": "[[1 ann] [2 bob]]",
		"shop_orders":    "[]",
		"shop_items":     "[[1 a-1 <nil>] [2 b-2 red]]",
	} {
		if got := e.rowsOf(table); got != want {
			t.Errorf("%s rows %s, want %s", table, got, want)
		}
	}
	n := 0
	for _, ch := range e.tableChanges() {
		if strings.HasPrefix(ch, ledger.EventSchemaChanged) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d schema_changed entries, want 1 (the restart finds the column and changes nothing)", n)
	}
	e.checkNoRunningTxn()
}

// The evolver options refuse the routing they do not fit.
func TestTableEvolversNeedRouting(t *testing.T) {
	t.Parallel()
	e := cdcEnv(t)
	ld := e.loader(nil)
	defer ld.Close(context.Background())
	cfg := e.config()
	per := WithTableEvolvers(func(string) SchemaEvolver { return &TableEvolver{} })
	if _, err := New(cfg, ld, per); !errors.Is(err, errEvolversNeedRouting) {
		t.Errorf("WithTableEvolvers without routing: %v", err)
	}
	cfg.Routing = Routing{DebeziumTemplate: "{db}_{table}"}
	if _, err := New(cfg, ld, WithSchemaEvolver(&TableEvolver{})); !errors.Is(err, errEvolverWithRouting) {
		t.Errorf("WithSchemaEvolver with routing: %v", err)
	}
}

// shopStream is a change stream of the shop database: n rows of each
// table interleaved, items' schema gaining color from the middle on, every
// third order updated, every fourth customer deleted. want is the final
// state per target table (rows as text), events the records per table.
func shopStream(n int) (recs []*kgo.Record, want map[string]string, events map[string]int64) {
	type row struct {
		id  int
		txt string
	}
	final := map[string][]row{}
	put := func(table string, id int, txt string) {
		rs := final[table]
		for i := range rs {
			if rs[i].id == id {
				rs[i].txt = txt
				return
			}
		}
		final[table] = append(rs, row{id, txt})
	}
	del := func(table string, id int) {
		final[table] = slices.DeleteFunc(final[table], func(r row) bool { return r.id == id })
	}
	events = map[string]int64{}
	add := func(table string, r *kgo.Record) {
		recs = append(recs, r)
		events[table]++
	}
	for i := 1; i <= n; i++ {
		add("shop_customers", shopRecord("customers", shopCustomers, "c", i, fmt.Sprintf(`{"id":%d,"name":"c%d"}`, i, i)))
		put("shop_customers", i, fmt.Sprintf("%d c%d", i, i))
		add("shop_orders", shopRecord("orders", shopOrders, "c", i, fmt.Sprintf(`{"id":%d,"amount":%d}`, i, 10*i)))
		put("shop_orders", i, fmt.Sprintf("%d %d", i, 10*i))
		if i > n/2 {
			add("shop_items", shopRecord("items", shopItemsV2, "c", i, fmt.Sprintf(`{"id":%d,"sku":"s%d","color":"red"}`, i, i)))
			put("shop_items", i, fmt.Sprintf("%d s%d red", i, i))
		} else {
			add("shop_items", shopRecord("items", shopItems, "c", i, fmt.Sprintf(`{"id":%d,"sku":"s%d"}`, i, i)))
			put("shop_items", i, fmt.Sprintf("%d s%d <nil>", i, i))
		}
		if i%3 == 0 {
			add("shop_orders", shopRecord("orders", shopOrders, "u", i, fmt.Sprintf(`{"id":%d,"amount":%d}`, i, 10*i+1)))
			put("shop_orders", i, fmt.Sprintf("%d %d", i, 10*i+1))
		}
		if i%4 == 0 {
			add("shop_customers", shopRecord("customers", shopCustomers, "d", i, fmt.Sprintf(`{"id":%d,"name":"c%d"}`, i, i)))
			del("shop_customers", i)
		}
	}
	want = map[string]string{}
	for table, rs := range final {
		slices.SortFunc(rs, func(a, b row) int { return a.id - b.id })
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = "[" + r.txt + "]"
		}
		want[table] = "[" + strings.Join(parts, " ") + "]"
	}
	return recs, want, events
}

// A crash at every failpoint, at its first and at a later hit (some tables'
// txns begun, precommitted or committed and others not), while a Debezium
// stream of three tables is created, evolved (items' new column) and
// loaded with deletes: after restarts every table holds the source's final
// state, the committed txns loaded each table's events exactly once, each
// table was created once and items changed once, and no txn lingers.
func TestRoutedCDCCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	for _, fp := range loader.AllFailpoints {
		for _, skip := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/skip=%d", fp, skip), func(t *testing.T) {
				t.Parallel()
				e := cdcEnv(t)
				recs, want, events := shopStream(8)
				e.produce(recs...)
				fps := loader.NewFailpoints()
				h, err := fps.Arm(fp, loader.Crash().Skip(skip).Times(1))
				if err != nil {
					t.Fatal(err)
				}
				var needs atomic.Int64
				for run := 0; ; run++ {
					if run == 4 {
						t.Fatal("not done after 4 runs")
					}
					f := fps
					if run > 0 {
						f = nil
					}
					ld := e.loader(f)
					var rec recorder
					c := e.shopConnectorRows(ld, &rec, &needs, 5)
					err := e.runToEnd(ctxFor(t), c)
					if err == nil {
						break
					}
					if !errors.Is(err, loader.ErrCrashed) {
						t.Fatalf("run %d: %v", run, err)
					}
				}
				if h.Hits() == 0 {
					t.Errorf("failpoint %s (skip %d) not reached", fp, skip)
				}
				for table, w := range want {
					if got := e.rowsOf(table); got != w {
						t.Errorf("%s rows %s, want %s", table, got, w)
					}
				}
				loaded := map[string]int64{}
				created, changed := 0, 0
				entries, _, err := ledger.ReadFile(e.dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, en := range entries {
					switch en.Event {
					case ledger.EventCommitted:
						loaded[en.Table] += en.RowsLoaded
					case ledger.EventTableCreated:
						created++
					case ledger.EventSchemaChanged:
						changed++
					}
				}
				for table, n := range events {
					if loaded[strings.TrimPrefix(table, testDB+".")] != n {
						t.Errorf("committed txns of %s loaded %d rows, want its %d events once", table, loaded[table], n)
					}
				}
				if created != 3 || changed != 1 {
					t.Errorf("ledger: %d table_created, %d schema_changed; want 3 and 1", created, changed)
				}
				e.checkNoRunningTxn()
			})
		}
	}
}
