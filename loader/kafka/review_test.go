package kafka

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Review of issue 25 × 28: a tombstone the job's format skips (a Debezium
// envelope) loads no row and reads nothing of its key, so its key's size
// is no reason to refuse it. Dead-lettering it also made verify count it
// twice (as a skipped tombstone read from Kafka and as a dead letter of
// the ledger): a false gap. It is skipped and counted as a tombstone.
func TestReviewSkippedTombstoneWithBigKeyIsNoDeadLetter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	if err := e.srv.CreateTable(testDB, "CREATE TABLE users (id BIGINT, name VARCHAR(32)) UNIQUE KEY(id) "+
		`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`); err != nil {
		t.Fatal(err)
	}
	e.table, e.format, e.props = "users", FormatDebezium, RequiredProperties(FormatDebezium)
	e.produce(
		&kgo.Record{Value: []byte(`{"op":"c","before":null,"after":{"id":1,"name":"a"}}`)},
		&kgo.Record{Key: bytes.Repeat([]byte("k"), 2048)}, // a tombstone with a big key
		&kgo.Record{Value: []byte(`{"op":"c","before":null,"after":{"id":2,"name":"b"}}`)},
	)
	if _, err := e.adm.CreateTopic(ctxFor(t), 1, 1, nil, "users-dlq"); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "users-dlq", true
	cfg.MaxKeyBytes = 1024
	c := e.connector(cfg, nil)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := e.srv.Rows(testDB, "users")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows), "[[1 a] [2 b]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if got := c.Metrics().Tombstones.Load(); got != 1 {
		t.Errorf("Tombstones = %d, want 1", got)
	}
	if got := c.Metrics().DeadLettered.Load(); got != 0 {
		t.Errorf("DeadLettered = %d, want 0 (a skipped tombstone is no bad record)", got)
	}
}

// Review of issue 30 item 4: with per-table deletes (tables.<t>.delete,
// WithTableDeletes) and no schema evolution, the routed tables' converters
// watch nothing, and the routed-table watch was turned off too: a field
// no routed table has was silently not counted or named.
func TestReviewRoutedFieldsWatchedWithTableDeletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.createRoutedTables()
	e.produceRouted(9)
	e.produce(&kgo.Record{Partition: 0, Value: []byte(`{"id":9,"v":"v9","kind":"ra","colour":"red"}`)})
	cfg := e.config()
	cfg.Routing = Routing{TableField: "kind"}
	c := e.connector(cfg, nil,
		WithRoutedTableColumns(func(context.Context, string) []string { return []string{"id", "v", "kind"} }),
		WithTableDeletes(func(string) DeleteConfig { return DeleteConfig{} }))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatal(err)
	}
	if got := c.Metrics().UnknownFields.Load(); got != 1 {
		t.Errorf("UnknownFields = %d, want 1 (colour, which table ra lacks)", got)
	}
}
