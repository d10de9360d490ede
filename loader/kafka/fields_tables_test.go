package kafka

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 30: a multi-table job warned "JSON field is not a column of the
// table" for every field of a routed table and counted them in
// unknown_fields: the check used doris.table's columns. Each routed row is
// now checked against its own table's columns (looked up once per table);
// a field its table lacks is still counted and named, once per table.
func TestRoutedRowsCheckedAgainstTheirTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.createRoutedTables()
	e.produceRouted(9)
	e.produce(&kgo.Record{Partition: 0, Value: []byte(`{"id":9,"v":"v9","kind":"ra","colour":"red"}`)})
	cfg := e.config()
	cfg.Routing = Routing{TableField: "kind"}
	var logs syncBuffer
	looked := map[string]int{}
	c := e.connector(cfg, nil,
		WithTableColumns([]string{"order_id", "status"}), // doris.table's: no routed row has them
		WithRoutedTableColumns(func(_ context.Context, table string) []string {
			looked[table]++
			return []string{"id", "v", "kind"}
		}),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatal(err)
	}
	if got := c.Metrics().UnknownFields.Load(); got != 1 {
		t.Errorf("UnknownFields = %d, want 1 (colour, which table ra lacks)", got)
	}
	out := logs.String()
	if strings.Count(out, "JSON field is not a column") != 1 || !strings.Contains(out, "field=colour table=ra") {
		t.Errorf("want one warning naming colour and table ra:\n%s", out)
	}
	for _, tbl := range routedTables {
		if looked[tbl] != 1 {
			t.Errorf("table %s columns looked up %d times, want once", tbl, looked[tbl])
		}
	}
}

// BenchmarkRecordLoop1KRouted is BenchmarkRecordLoop1K with routing
// (routing.topic_tables) and the unknown-field watch of the routed table:
// the per-record cost of checking each row against its own table.
func BenchmarkRecordLoop1KRouted(b *testing.B) {
	const n = 1024
	sink := &discardSink{}
	cols := []string{"id", "ts", "customer", "amount", "note"}
	c, err := New(Config{Brokers: []string{"127.0.0.1:1"}, Topic: testTopic, Group: "g", Format: FormatJSON,
		CheckpointInterval: time.Hour, PartitionRefresh: -1, Routing: Routing{TopicTables: map[string]string{testTopic: "t1"}}},
		sink, WithTableColumns(cols), WithRoutedTableColumns(func(context.Context, string) []string { return cols }))
	if err != nil {
		b.Fatal(err)
	}
	c.next = topicOffsets{}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: testTopic, Partition: 0, Value: benchJSON1K}
	}
	var off int64
	ctx := context.Background()
	b.SetBytes(int64(n * len(benchJSON1K)))
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range recs {
			r.Offset = off
			off++
		}
		if err := c.handlePartition(ctx, testTopic, &kgo.FetchPartition{Partition: 0, Records: recs}); err != nil {
			b.Fatal(err)
		}
	}
	if got := c.metrics.UnknownFields.Load(); got != 0 {
		b.Fatalf("%d unknown fields counted, want 0", got)
	}
}
