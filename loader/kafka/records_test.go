package kafka

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/ledger"
)

// produceBad writes ids [0,10), a bad record at offset 10, ids [11,15) to
// a 1-partition topic.
func produceBad(e *env) {
	e.produceIDs(0, 10, 1)
	e.produce(&kgo.Record{Value: []byte("not json")})
	e.produceIDs(11, 15, 1)
}

func TestBadRecordFailsCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	produceBad(e)
	cfg := e.config()
	cfg.CheckpointMaxRows = 5
	err := e.runToEnd(ctxFor(t), e.connector(cfg, nil))
	var re *RecordError
	if !errors.As(err, &re) {
		t.Fatalf("Run: %v, want a *RecordError", err)
	}
	if re.Topic != testTopic || re.Partition != 0 || re.Offset != 10 || !strings.Contains(err.Error(), "orders/0@10") {
		t.Fatalf("RecordError %+v (%v): want orders/0@10", re, err)
	}
	// Checkpoints [0,5) and [5,10) were decided; nothing after them.
	got := e.ids()
	if len(got) != 10 {
		t.Fatalf("rows %v, want ids 0..9", got)
	}
	e.checkExactlyOnce(10)
}

func TestBadRecordDeadLetter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	produceBad(e)
	ctx := ctxFor(t)
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.CheckpointMaxRows = 5
	cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce = "orders-dlq", true
	var rec recorder
	c := e.connector(cfg, nil, WithOnCheckpoint(rec.add))
	if err := e.runToEnd(ctx, c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(15, 10)
	if got := c.Metrics().DeadLettered.Load(); got != 1 {
		t.Fatalf("DeadLettered = %d, want 1", got)
	}
	var dl int64
	for _, s := range rec.stats() {
		dl += s.DeadLettered
	}
	if dl != 1 {
		t.Fatalf("checkpoint stats report %d dead-lettered, want 1", dl)
	}
	// The ledger counts it too (docs/design.md §5, §6): in the decided and the
	// committed entry of the checkpoint that covered offset 10, nowhere else.
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	dlByEvent, total := map[string]int64{}, int64(0)
	for _, en := range entries {
		dlByEvent[en.Event] += en.DeadLettered
		total += en.DeadLettered
	}
	if dlByEvent[ledger.EventDecided] != 1 || dlByEvent[ledger.EventCommitted] != 1 || total != 2 {
		t.Fatalf("ledger dead_lettered by event %v, want 1 decided and 1 committed", dlByEvent)
	}
	// The record is in the dead-letter topic, with its origin.
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.ConsumeTopics("orders-dlq"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fs := cl.PollRecords(ctx, 10)
	if err := fs.Err0(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Value) != "not json" {
		t.Fatalf("dead-letter topic holds %d records (%v), want the bad one", len(recs), recs)
	}
	h := map[string]string{}
	for _, x := range recs[0].Headers {
		h[x.Key] = string(x.Value)
	}
	if h[HeaderTopic] != testTopic || h[HeaderPartition] != "0" || h[HeaderOffset] != "10" || h[HeaderError] == "" {
		t.Fatalf("dead-letter headers %v", h)
	}
}

// TestDebeziumDeleteOnUniqueTable: op d loads the before image with
// __DORIS_DELETE_SIGN__ = 1 through hidden_columns, which removes the key
// of a merge-on-write Unique table (docs/doris-facts.md §7).
func TestDebeziumDeleteOnUniqueTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	if err := e.srv.CreateTable(testDB, "CREATE TABLE users (id BIGINT, name VARCHAR(32)) UNIQUE KEY(id) "+
		`DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")`); err != nil {
		t.Fatal(err)
	}
	e.table, e.format, e.props = "users", FormatDebezium, RequiredProperties(FormatDebezium)
	var recs []*kgo.Record
	for _, v := range []string{
		`{"op":"c","before":null,"after":{"id":1,"name":"a"}}`,
		`{"op":"c","before":null,"after":{"id":2,"name":"b"}}`,
		`{"schema":{},"payload":{"op":"u","before":{"id":1,"name":"a"},"after":{"id":1,"name":"a2"}}}`,
		`{"op":"d","before":{"id":2,"name":"b"},"after":null}`,
		``, // tombstone (nil value) after the delete
		`{"op":"r","after":{"id":4,"name":"d"}}`,
	} {
		r := &kgo.Record{Value: []byte(v)}
		if v == "" {
			r.Value = nil
		}
		recs = append(recs, r)
	}
	e.produce(recs...)
	cfg := e.config()
	cfg.CheckpointMaxRows = 2
	c := e.connector(cfg, nil)
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := e.srv.Rows(testDB, "users")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows), "[[1 a2] [4 d]]"; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if got := c.Metrics().Tombstones.Load(); got != 1 {
		t.Fatalf("Tombstones = %d, want 1", got)
	}
}

func TestMetadataColumns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	if err := e.srv.CreateTable(testDB, "CREATE TABLE audit (id BIGINT, v VARCHAR(32), k_topic VARCHAR(64), "+
		"k_partition INT, k_offset BIGINT, k_ts BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	e.table = "audit"
	e.produceIDs(0, 10, 2)
	cfg := e.config()
	cfg.Metadata = MetadataColumns{Topic: "k_topic", Partition: "k_partition", Offset: "k_offset", Timestamp: "k_ts"}
	if err := e.runToEnd(ctxFor(t), e.connector(cfg, nil)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows, err := e.srv.Rows(testDB, "audit")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 {
		t.Fatalf("%d rows, want 10", len(rows))
	}
	for _, r := range rows {
		id := r[0].(int64)
		if r[2] != testTopic || r[3] != id%2 || r[4] != id/2 || r[5].(int64) <= 0 {
			t.Fatalf("row %v: want topic %s partition %d offset %d and a timestamp", r, testTopic, id%2, id/2)
		}
	}
}
