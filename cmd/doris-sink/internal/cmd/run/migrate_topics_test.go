package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Issue 12, positions you can trust: one restart both migrates the file
// store to Kafka (job.coordinator file → kafka) and changes the topic set
// (kafka.topic orders → kafka.topics [orders, items]), the last file run
// having crashed right after a decision. The import adopts the one-topic
// store (as a file or Kafka start alone does), the decided checkpoint is
// committed by recovery, orders resumes where it stopped, items starts at
// its earliest offset, and every row is loaded exactly once; the Kafka
// state records the source "kafka" and both topic IDs. A later switch
// back to file is refused by the migration marker. A topic set without
// orders is refused (the store cannot be adopted), naming the order in
// which to make the two changes, and imports nothing.
func TestMigrateFileToKafkaWithTopicChange(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "items"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := 100; i < 105; i++ {
		recs = append(recs, &kgo.Record{Topic: "items", Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
	}
	if err := e.prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.dir, "data")
	e.coord = config.CoordinatorFile
	e.produce(6) // ids 0..5 on orders
	e.runDrainedAt(e.topicsConfig(dir, "topic: orders"), kafka.PositionOf(map[string]map[int32]int64{"orders": {0: 3, 1: 3}}))
	e.produce(4) // ids 6..9: decided by the next file run, which crashes before the commit
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	cfg := e.topicsConfig(dir, "topic: orders")
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	log, err := NewLogger(config.Log{Level: "info"}, &e.logs)
	if err != nil {
		t.Fatal(err)
	}
	job, err := Build(cfg, Deps{Doris: client, Logger: log, Failpoints: fps,
		ConnectorOpts: []kafka.Opt{kafka.WithRecoverBackoff(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Connector.Run(ctx); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("file run: %v, want a crash after decide", err)
	}
	fst, err := checkpoint.ReadFile(dir)
	if err != nil || fst.Decided == nil || fst.Decided.Committed || fst.Owner.Source != "kafka:orders" {
		t.Fatalf("file store after the crash: %+v %v, want an uncommitted decision of source kafka:orders", fst, err)
	}

	e.coord = config.CoordinatorKafka
	// A topic set without the stored topic cannot be adopted: refused,
	// naming the order of the two changes; nothing is imported.
	_, err = e.buildCfg(e.topicsConfig(dir, "topics: [items]"))
	var owner *checkpoint.OwnerError
	if !errors.As(err, &owner) || !strings.Contains(err.Error(), "one change at a time") ||
		!strings.Contains(err.Error(), "job.coordinator kafka and the old topics") {
		t.Fatalf("migrating and dropping orders in one restart: %v, want a refusal naming the order of the changes", err)
	}
	e.runDrainedAt(e.topicsConfig(dir, "topics: [orders, items]"),
		kafka.PositionOf(map[string]map[int32]int64{"orders": {0: 5, 1: 5}, "items": {0: 5}}))
	e.checkIDs(append(seq(0, 10), seq(100, 105)...))
	if !strings.Contains(e.logs.String(), "imported the file checkpoint store into Kafka") {
		t.Errorf("no import logged:\n%s", e.logs.String())
	}
	sn, err := coordlog.ReadSnapshot(ctx, coordJob, kafka.ClientOpts(kafka.Config{Brokers: e.kafka.ListenAddrs()}))
	if err != nil {
		t.Fatal(err)
	}
	kst, doc, _, err := sn.StateOf("")
	if err != nil || kst.Owner.Source != "kafka" || kst.Decided == nil || kst.Decided.ID <= fst.Decided.ID || !kst.Decided.Committed {
		t.Fatalf("kafka state: %+v %v, want source kafka, decisions after file checkpoint %d", kst, err, fst.Decided.ID)
	}
	if ids := doc.IDs(); len(ids) != 2 || ids["orders"] == "" || ids["items"] == "" {
		t.Errorf("topic IDs recorded %v, want orders and items", ids)
	}
	e.coord = config.CoordinatorFile
	var me *MigratedError
	if _, err := e.buildCfg(e.topicsConfig(dir, "topic: orders")); !errors.As(err, &me) {
		t.Fatalf("file start in the migrated data dir: %v, want *MigratedError", err)
	}
}

// seq returns [from, to).
func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// checkIDs asserts the table holds exactly ids, once each.
func (e *coordEnv) checkIDs(ids []int64) {
	e.t.Helper()
	rows, err := e.doris.Rows("db", "t")
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for _, id := range ids {
		if seen[id] != 1 {
			e.t.Errorf("id %d loaded %d times, want once", id, seen[id])
		}
	}
	if len(rows) != len(ids) {
		e.t.Errorf("%d rows, want %d", len(rows), len(ids))
	}
}
