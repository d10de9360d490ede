package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// A job with job.coordinator kafka and a dead-letter topic gets exactly-once
// dead letters from Build (the coordinator store stages them): two failed
// precommits, each followed by a rewind and a re-read, leave each bad
// record once in the dead-letter topic (read_committed) and every good one
// once in Doris. Before, each rewind produced the bad records again.
func TestBuildDeadLettersExactlyOnceWithKafkaCoordinator(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	if _, err := e.adm.CreateTopic(context.Background(), 1, 1, nil, "orders-dlq"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 12 {
		v := fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)
		if i%5 == 2 {
			v = fmt.Appendf(nil, "bad %d", i)
		}
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: v})
	}
	if err := e.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e.produced = 12
	yaml := fmt.Sprintf(`job: {name: %s, data_dir: %s, coordinator: kafka}
kafka: {brokers: [%s], topic: orders, start: earliest}
doris: {fe: [%s], mysql: %s, user: root, database: db, table: t}
delivery: {checkpoint_interval: 30m, checkpoint_max_rows: 4}
records: {dead_letter_topic: orders-dlq}
metrics: {listen: ""}
`, coordJob, e.dir, e.kafka.ListenAddrs()[0], e.doris.FEURL(), e.doris.MySQLAddr())
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{File: path, Need: config.NeedRun})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterPrecommit, loader.ReturnError(nil).Times(2)); err != nil {
		t.Fatal(err)
	}
	var job *Job
	job, err = Build(cfg, Deps{Doris: client, Failpoints: fps, FenceCheckInterval: time.Millisecond,
		ConnectorOpts: []kafka.Opt{kafka.WithRecoverBackoff(0, 0), e.drainAtEnd(&job)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := job.Connector.Run(ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	if n := job.Connector.Metrics().CheckpointFailures.Load(); n != 2 {
		t.Fatalf("%d failed checkpoints, want the 2 injected", n)
	}
	rows, err := e.doris.Rows("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 12-2 {
		t.Errorf("%d rows loaded, want 10", len(rows))
	}
	// Read the dead-letter topic with read_committed up to a sentinel.
	if err := e.prod.ProduceSync(ctx, &kgo.Record{Topic: "orders-dlq", Value: []byte("sentinel")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kafka.ListenAddrs()...), kgo.ConsumeTopics("orders-dlq"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]int{}
	for got["sentinel"] == 0 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)]++ })
	}
	delete(got, "sentinel")
	if want := map[string]int{"bad 2": 1, "bad 7": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("dead-letter topic (read_committed) holds %v, want %v: each bad record once", got, want)
	}
}
