package status

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// status of a job reading two topics lists every partition with its topic,
// loaded position from the store's decision and high watermark from Kafka,
// and sums the lag over both topics.
func TestStatusSeveralTopics(t *testing.T) {
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a"), kfake.SeedTopics(1, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{Topic: "a", Partition: int32(i % 2), Value: []byte("x")}, &kgo.Record{Topic: "b", Value: []byte("y")})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Job: config.Job{Name: "st", DataDir: t.TempDir(), Coordinator: config.CoordinatorFile},
		Kafka: config.Kafka{Brokers: kc.ListenAddrs(), Topics: []string{"a", "b"}}, Doris: config.Doris{Database: "d", Table: "t"}}
	fs, err := checkpoint.OpenFile(cfg.Job.DataDir, run.Owner(cfg))
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := st.Announce(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	end, _ := kafka.PositionOf(map[string]map[int32]int64{"a": {0: 2, 1: 2}, "b": {0: 4}}).MarshalJSON()
	st.Decide(checkpoint.Decision{ID: a.ID, Label: a.Label, TxnID: 5, End: end, DecidedAt: time.Now(), Committed: true, CommittedAt: time.Now()})
	if err := fs.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	fs.Close()
	res := collect(ctx, cfg, time.Now)
	if res.KafkaError != "" || res.Store.Error != "" || res.Topic != "a,b" {
		t.Fatalf("status: kafka %q store %q topic %q", res.KafkaError, res.Store.Error, res.Topic)
	}
	want := []struct {
		topic             string
		part              int32
		loaded, hw, lagOf int64
	}{{"a", 0, 2, 3, 1}, {"a", 1, 2, 2, 0}, {"b", 0, 4, 5, 1}}
	if len(res.Partitions) != len(want) {
		t.Fatalf("partitions %+v, want %d", res.Partitions, len(want))
	}
	for i, w := range want {
		p := res.Partitions[i]
		if p.Topic != w.topic || p.Partition != w.part || p.Loaded == nil || *p.Loaded != w.loaded ||
			p.HighWatermark == nil || *p.HighWatermark != w.hw || p.Lag == nil || *p.Lag != w.lagOf {
			t.Errorf("partition %d = %+v, want %+v", i, p, w)
		}
	}
	if res.Lag == nil || *res.Lag != 2 {
		t.Errorf("lag %v, want 2", res.Lag)
	}
}
