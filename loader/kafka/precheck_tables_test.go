package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// widenEvolver is a SchemaEvolver that, for the first row with field w,
// lengthens v to VARCHAR(64) and adds w VARCHAR(64) (what TableEvolver
// does for a Debezium schema declaring longer strings).
type widenEvolver struct {
	ddl     TableDDL
	table   string
	applied int
}

func (w *widenEvolver) AddsColumns() bool { return true }

func (w *widenEvolver) read(ctx context.Context) (*schema.Table, bool, error) {
	t, err := w.ddl.ShowCreateTable(ctx, testDB, w.table)
	if err != nil {
		return nil, false, err
	}
	_, _, has := t.Column("w")
	return t, has, nil
}

func (w *widenEvolver) Needs(ctx context.Context, _ Incoming) ([]schema.Column, bool, error) {
	t, has, err := w.read(ctx)
	if err != nil {
		return nil, false, err
	}
	return t.Columns, !has, nil
}

func (w *widenEvolver) Apply(ctx context.Context, _ Incoming) ([]schema.Column, error) {
	if _, has, err := w.read(ctx); err != nil || has {
		return nil, fmt.Errorf("apply: has w %v: %v", has, err)
	}
	ddl := schema.AlterColumnsSQL(testDB, w.table, []schema.Column{{Name: "w", Type: "VARCHAR(64)", Nullable: true}},
		[]schema.Column{{Name: "v", Type: "VARCHAR(64)", Nullable: true}})
	if err := w.ddl.ExecDDL(ctx, ddl); err != nil {
		return nil, err
	}
	w.applied++
	t, _, err := w.read(ctx)
	if err != nil {
		return nil, err
	}
	return t.Columns, nil
}

// Review of issue 11, finding 5 (dlq × schema evolution): the pre-check
// read doris.table once at start and ran before schema evolution, so after
// evolution lengthened a VARCHAR it dead-lettered (reason length) rows
// Doris now takes, until a restart. It runs after evolution now, and is
// rebuilt from the columns evolution returns: rows within the new length
// load, a row over it is still dead-lettered, no checkpoint is refused.
func TestRowCheckFollowsSchemaEvolution(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	if err := e.srv.CreateTable(testDB, "CREATE TABLE evo (id BIGINT, v VARCHAR(8)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	e.table = "evo"
	long, tooLong := strings.Repeat("x", 20), strings.Repeat("y", 80)
	e.produce(
		&kgo.Record{Value: []byte(`{"id":0,"v":"short"}`)},
		&kgo.Record{Value: []byte(`{"id":1,"v":"` + long + `"}`)},         // too long for VARCHAR(8): dead letter
		&kgo.Record{Value: []byte(`{"id":2,"v":"` + long + `","w":"a"}`)}, // evolution widens v first
		&kgo.Record{Value: []byte(`{"id":3,"v":"` + long + `"}`)},         // VARCHAR(64) now
		&kgo.Record{Value: []byte(`{"id":4,"v":"` + tooLong + `"}`)},      // over 64: dead letter
	)
	ctx := ctxFor(t)
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	tbl, err := e.client.ShowCreateTable(ctx, testDB, "evo")
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.CheckpointMaxRows = 100
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
	ev := &widenEvolver{ddl: e.client, table: "evo"}
	c := e.connector(cfg, nil, WithRowCheck(tbl, nil), WithSchemaEvolver(ev), WithTableColumns([]string{"id", "v"}))
	if err := e.runToEnd(ctx, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ev.applied != 1 {
		t.Fatalf("evolution applied %d times, want 1", ev.applied)
	}
	if n := c.Metrics().CheckpointFailures.Load(); n != 0 {
		t.Fatalf("%d refused checkpoints, want none", n)
	}
	got := e.ids()
	for id, want := range map[int64]int{0: 1, 1: 0, 2: 1, 3: 1, 4: 0} {
		if got[id] != want {
			t.Errorf("id %d loaded %d times, want %d", id, got[id], want)
		}
	}
	dl := map[string]string{}
	for _, r := range e.readDLQ("orders-dlq") {
		h := headers(r)
		dl[h[HeaderOffset]] = h[HeaderReason] + "/" + h[HeaderColumn]
	}
	if fmt.Sprint(dl) != "map[1:length/v 4:length/v]" {
		t.Fatalf("dead letters %v, want offsets 1 and 4 (length of v)", dl)
	}
}

// Review of issue 11, finding 5 (dlq × routing): routed rows were not
// pre-checked (the check knew doris.table only), so a routed row Doris
// refuses cost a refused load and a bisection. With WithRoutedRowCheck
// each routed table is read on its first row and its rows are checked
// against it: the bad row is dead-lettered (reason length), no load is
// refused; a routed table that cannot be read is loaded unchecked.
func TestRoutedRowsArePreChecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	for _, ddl := range []string{
		"CREATE TABLE ra (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
		"CREATE TABLE rb (id BIGINT, v VARCHAR(4)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
	} {
		if err := e.srv.CreateTable(testDB, ddl); err != nil {
			t.Fatal(err)
		}
	}
	var recs []*kgo.Record
	for i := range 12 {
		tbl, v := []string{"ra", "rb"}[i%2], fmt.Sprintf("v%d", i)
		if i == 5 || i == 9 {
			v = "longer than four" // fits ra's VARCHAR(32), not rb's VARCHAR(4)
		}
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d,"v":%q,"kind":%q}`, i, v, tbl)})
	}
	e.produce(recs...)
	ctx := ctxFor(t)
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.Routing = Routing{TableField: "kind"}
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
	reads := map[string]int{}
	tr := countingReader{TableSchemaReader: e.client, reads: reads}
	c := e.connector(cfg, nil, WithRoutedRowCheck(tr, testDB, func(string) map[string]string { return nil }))
	if err := e.runToEnd(ctx, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := c.Metrics().CheckpointFailures.Load(); n != 0 {
		t.Fatalf("%d refused loads, want none (the pre-check knows rb)", n)
	}
	if fmt.Sprint(reads) != "map[ra:1 rb:1]" {
		t.Fatalf("table reads %v, want each routed table read once", reads)
	}
	dl := map[string]string{}
	for _, r := range e.readDLQ("orders-dlq") {
		h := headers(r)
		dl[h[HeaderOffset]] = h[HeaderReason] + "/" + h[HeaderColumn]
	}
	if fmt.Sprint(dl) != "map[5:length/v 9:length/v]" {
		t.Fatalf("dead letters %v, want offsets 5 and 9 (length of v)", dl)
	}
	for k, tbl := range []string{"ra", "rb"} {
		rows, err := e.srv.Rows(testDB, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if want := 6 - 2*k; len(rows) != want {
			t.Errorf("table %s holds %d rows, want %d", tbl, len(rows), want)
		}
	}
}

// countingReader counts the schema reads per table.
type countingReader struct {
	TableSchemaReader
	reads map[string]int
}

func (r countingReader) ShowCreateTable(ctx context.Context, db, table string) (*schema.Table, error) {
	r.reads[table]++
	return r.TableSchemaReader.ShowCreateTable(ctx, db, table)
}
