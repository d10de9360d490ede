package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// sinkTo runs the real connector (run.Build) from the start of topic until
// it consumed want records, then drains it; it returns the job's config.
func sinkTo(t *testing.T, k *kafkaEnv, ddl, topic, format, dlq string, want int64) (*config.Config, *cmdutil.Factory) {
	t.Helper()
	srv, client := cmdutil.NewTestDoris(t, ddl)
	cfg := &config.Config{
		Job:   config.Job{Name: "e2e", DataDir: filepath.Join(t.TempDir(), "data")},
		Kafka: config.Kafka{Brokers: k.brokers, Topic: topic, Group: "g-" + topic, Start: config.Start{Mode: config.StartEarliest}},
		Doris: config.Doris{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root", Database: "demo", Table: "events",
			Format: "json", Properties: map[string]string{"max_filter_ratio": "0"}},
		Delivery: config.Delivery{Guarantee: config.ExactlyOnce, CheckpointInterval: time.Hour, CheckpointMaxRows: 3},
		Records:  config.Records{Format: format, DeadLetterTopic: dlq, DeadLetterDelivery: config.DeadLetterAtLeastOnce},
	}
	var conn *kafka.Connector
	job, err := run.Build(cfg, run.Deps{Doris: client, ConnectorOpts: []kafka.Opt{
		kafka.WithKgoOpts(kgo.FetchMaxWait(50 * time.Millisecond)),
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(kafka.Position) {
			if conn.Metrics().Records.Load() >= want {
				conn.Drain()
			}
		}})}})
	if err != nil {
		t.Fatal(err)
	}
	conn = job.Connector
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := conn.Run(ctx); err != nil {
		t.Fatalf("sink: %v", err)
	}
	return cfg, &cmdutil.Factory{Now: time.Now}
}

// verifyJob runs verify on the job as the command does (Doris and Kafka
// checked) and fails the test unless it reconciles with the accounting
// wanted on some checkpoint.
func verifyJob(t *testing.T, f *cmdutil.Factory, cfg *config.Config, check func(*Accounting) bool) {
	t.Helper()
	rep, err := VerifyConfig(context.Background(), f, cfg, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("verify on correct data: %v: %v", err, rep.Findings)
	}
	for _, c := range rep.Checkpoints {
		if c.Accounted != nil && check(c.Accounted) {
			return
		}
	}
	t.Errorf("no checkpoint accounts as expected: %+v", rep.Checkpoints)
}

const (
	dupDDL  = "CREATE TABLE events (id BIGINT, v VARCHAR(16)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
	uniqDDL = "CREATE TABLE events (id BIGINT, v VARCHAR(16)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 " +
		`PROPERTIES ("enable_unique_key_merge_on_write" = "true")`
)

// Issue 11 replayed end to end: a real sink loads a topic with records it
// dead-letters, debezium tombstones, and transactional producers' markers
// and aborted records; verify (against Doris and Kafka) exits 0.
func TestVerifyEndToEndOnCorrectData(t *testing.T) {
	t.Parallel()
	k := newKafkaEnv(t)
	t.Run("dead letters", func(t *testing.T) {
		t.Parallel()
		k.topic("in-dlq", nil)
		k.topic("dead", nil)
		var vs [][]byte
		for i := range 6 {
			v := fmt.Appendf(nil, `{"id":%d,"v":"v"}`, i)
			if i%3 == 1 {
				v = []byte("not json")
			}
			vs = append(vs, v)
		}
		k.produce("in-dlq", nil, vs)
		cfg, f := sinkTo(t, k, dupDDL, "in-dlq", config.RecordsJSON, "dead", 6)
		verifyJob(t, f, cfg, func(a *Accounting) bool { return a.DeadLettered > 0 })
	})
	t.Run("tombstones", func(t *testing.T) {
		t.Parallel()
		k.topic("in-cdc", nil)
		k.produce("in-cdc", nil, [][]byte{
			[]byte(`{"op":"c","after":{"id":1,"v":"a"}}`), []byte(`{"op":"d","before":{"id":1,"v":"a"}}`), nil,
			[]byte(`{"op":"c","after":{"id":2,"v":"b"}}`), nil, []byte(`{"op":"u","after":{"id":2,"v":"c"}}`)})
		cfg, f := sinkTo(t, k, uniqDDL, "in-cdc", config.RecordsDebezium, "", 6)
		verifyJob(t, f, cfg, func(a *Accounting) bool { return a.Tombstones > 0 })
	})
	t.Run("transaction markers", func(t *testing.T) {
		t.Parallel()
		k.topic("in-txn", nil)
		k.txn("in-txn", true, `{"id":1,"v":"a"}`, `{"id":2,"v":"b"}`)
		k.txn("in-txn", false, `{"id":9,"v":"x"}`)
		k.txn("in-txn", true, `{"id":3,"v":"c"}`, `{"id":4,"v":"d"}`)
		cfg, f := sinkTo(t, k, dupDDL, "in-txn", config.RecordsJSON, "", 4)
		verifyJob(t, f, cfg, func(a *Accounting) bool { return a.Control > 0 })
	})
}
