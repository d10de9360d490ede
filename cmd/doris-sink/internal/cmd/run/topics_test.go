package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// topicsConfig is coordEnv's job (job.coordinator e.coord) reading the
// kafka line topics (e.g. "topics: [a, b]").
func (e *coordEnv) topicsConfig(dataDir, topics string) *config.Config {
	e.t.Helper()
	coord := e.coord
	if coord == "" {
		coord = config.CoordinatorKafka
	}
	yaml := fmt.Sprintf(`job: {name: %s, data_dir: %s, coordinator: %s}
kafka: {brokers: [%s], %s}
doris: {fe: [%s], mysql: %s, user: root, database: db, table: t}
delivery: {checkpoint_interval: 30m, checkpoint_max_rows: 4}
metrics: {listen: ""}
`, coordJob, dataDir, coord, e.kafka.ListenAddrs()[0], topics, e.doris.FEURL(), e.doris.MySQLAddr())
	path := filepath.Join(e.t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{File: path, Need: config.NeedRun})
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// buildCfg builds cfg's job with the test deps.
func (e *coordEnv) buildCfg(cfg *config.Config, opts ...kafka.Opt) (*Job, error) {
	e.t.Helper()
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { client.Close() })
	log, err := NewLogger(config.Log{Level: "info"}, &e.logs)
	if err != nil {
		e.t.Fatal(err)
	}
	return Build(cfg, Deps{Doris: client, Logger: log, FenceCheckInterval: time.Millisecond,
		ConnectorOpts: append([]kafka.Opt{kafka.WithRecoverBackoff(0, 0)}, opts...)})
}

// `run` with kafka.topics and the Kafka coordinator: both topics load
// exactly once into the table, the group offsets of both are committed
// with the decision, the state records both topic IDs; removing a topic
// from the list, or recreating one, stops the next start naming it.
func TestCoordinatorSeveralTopics(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "items"); err != nil {
		t.Fatal(err)
	}
	e.produce(6) // ids 0..5 on orders
	var recs []*kgo.Record
	for i := 100; i < 105; i++ {
		recs = append(recs, &kgo.Record{Topic: "items", Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
	}
	if err := e.prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.dir, "data")
	cfg := e.topicsConfig(dir, "topics: [orders, items]")
	want := kafka.PositionOf(map[string]map[int32]int64{"orders": {0: 3, 1: 3}, "items": {0: 5}})
	var job *Job
	job, err := e.buildCfg(cfg, kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
		for t, offs := range want.PerTopic() {
			for part, o := range offs {
				if p.Of(t)[part] < o {
					return
				}
			}
		}
		job.Connector.Drain()
	}}))
	if err != nil {
		t.Fatalf("build: %v\n%s", err, e.logs.String())
	}
	if err := job.Connector.Run(ctx); err != nil {
		t.Fatalf("run: %v\n%s", err, e.logs.String())
	}
	rows, _ := e.doris.Rows("db", "t")
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for _, id := range []int64{0, 1, 2, 3, 4, 5, 100, 101, 102, 103, 104} {
		if seen[id] != 1 {
			t.Errorf("id %d loaded %d times, want once", id, seen[id])
		}
	}
	if len(rows) != 11 {
		t.Errorf("%d rows, want 11", len(rows))
	}
	fo, err := e.adm.FetchOffsets(ctx, "doris-sink-"+coordJob)
	if err != nil {
		t.Fatal(err)
	}
	for topic, offs := range want.PerTopic() {
		for p, o := range offs {
			if got, _ := fo.Lookup(topic, p); got.At != o {
				t.Errorf("group offset %s/%d = %d, want %d", topic, p, got.At, o)
			}
		}
	}
	sn, err := coordlog.ReadSnapshot(ctx, coordJob, kafka.ClientOpts(kafka.Config{Brokers: e.kafka.ListenAddrs()}))
	if err != nil {
		t.Fatal(err)
	}
	_, src, _, err := sn.StateOf("")
	if err != nil || len(src.TopicIDs) != 2 || src.TopicIDs["items"] == "" || src.TopicIDs["orders"] == "" {
		t.Fatalf("state source %+v %v, want the topic IDs of orders and items", src, err)
	}

	// items removed from the list (another topic added): refused, naming it.
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "other"); err != nil {
		t.Fatal(err)
	}
	_, err = e.buildCfg(e.topicsConfig(dir, "topics: [orders, other]"))
	var removed *kafka.RemovedTopicError
	if !errors.As(err, &removed) || removed.Topic != "items" {
		t.Fatalf("build without items: %v, want a *kafka.RemovedTopicError naming items", err)
	}
	// items recreated: refused, naming it.
	if _, err := e.adm.DeleteTopic(ctx, "items"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, "items"); err != nil {
		t.Fatal(err)
	}
	_, err = e.buildCfg(cfg)
	var rec *coordlog.TopicRecreatedError
	if !errors.As(err, &rec) || rec.Topic != "items" || !strings.Contains(err.Error(), "items") {
		t.Fatalf("build after items was recreated: %v, want a *coordlog.TopicRecreatedError naming items", err)
	}
}

// runDrainedAt runs cfg's job until it consumed want, and drains.
func (e *coordEnv) runDrainedAt(cfg *config.Config, want kafka.Position) {
	e.t.Helper()
	var job *Job
	job, err := e.buildCfg(cfg, kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
		for t, offs := range want.PerTopic() {
			for part, o := range offs {
				if p.Of(t)[part] < o {
					return
				}
			}
		}
		job.Connector.Drain()
	}}))
	if err != nil {
		e.t.Fatalf("build: %v\n%s", err, e.logs.String())
	}
	if err := job.Connector.Run(context.Background()); err != nil {
		e.t.Fatalf("run: %v\n%s", err, e.logs.String())
	}
}

// A one-topic job (kafka.topic orders, owner source "kafka:orders")
// switched to kafka.topics [orders, items] (source "kafka") resumes its
// store with either coordinator: orders where it stopped (nothing loaded
// twice), items from its earliest offset, and the store then records the
// source "kafka". Switched to topics without orders it stays refused (the
// owner differs).
func TestSwitchOneTopicJobToSeveralTopics(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newCoordEnv(t)
			e.coord = coord
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for _, topic := range []string{"items", "other"} {
				if _, err := e.adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
					t.Fatal(err)
				}
			}
			var recs []*kgo.Record
			for i := 100; i < 105; i++ {
				recs = append(recs, &kgo.Record{Topic: "items", Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
			}
			if err := e.prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(e.dir, "data")
			e.produce(6) // ids 0..5 on orders
			e.runDrainedAt(e.topicsConfig(dir, "topic: orders"), kafka.PositionOf(map[string]map[int32]int64{"orders": {0: 3, 1: 3}}))

			_, err := e.buildCfg(e.topicsConfig(dir, "topics: [items, other]"))
			var owner *checkpoint.OwnerError
			if !errors.As(err, &owner) || owner.Stored.Source != "kafka:orders" {
				t.Fatalf("switched to topics without orders: %v, want a *checkpoint.OwnerError (stored source kafka:orders)", err)
			}

			e.produce(4) // ids 6..9 on orders
			e.runDrainedAt(e.topicsConfig(dir, "topics: [orders, items]"),
				kafka.PositionOf(map[string]map[int32]int64{"orders": {0: 5, 1: 5}, "items": {0: 5}}))
			rows, err := e.doris.Rows("db", "t")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]int{}
			for _, r := range rows {
				seen[r[0].(int64)]++
			}
			for _, id := range []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102, 103, 104} {
				if seen[id] != 1 {
					t.Errorf("id %d loaded %d times, want once", id, seen[id])
				}
			}
			if len(rows) != 15 {
				t.Errorf("%d rows, want 15", len(rows))
			}
			var st *checkpoint.State
			if coord == config.CoordinatorFile {
				st, err = checkpoint.ReadFile(dir)
			} else {
				var sn *coordlog.Snapshot
				sn, err = coordlog.ReadSnapshot(ctx, coordJob, kafka.ClientOpts(kafka.Config{Brokers: e.kafka.ListenAddrs()}))
				if err == nil {
					st, _, _, err = sn.StateOf("")
				}
			}
			if err != nil || st.Owner.Source != "kafka" {
				t.Fatalf("stored state %v: owner %+v, want source kafka recorded", err, st)
			}
		})
	}
}
