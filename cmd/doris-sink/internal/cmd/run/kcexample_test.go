package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// kcExample is the doris-kafka-connector's own example sink config
// (config/testdata/doris-kafka-connector/README.md names its source and
// license).
const kcExample = "../../config/testdata/doris-kafka-connector/doris-connector-sink.properties"

// Issue 30: a Kafka Connect user brings the connector's .properties file
// as it is: the doris-kafka-connector's example config runs against the
// sandbox (kfake + the Doris emulator) with only its addresses changed
// (doris.urls and the ports; the brokers, which a Connect worker's own
// config holds, from DORIS_SINK_KAFKA__BROKERS; the local data dir and
// metrics port from the environment too), and loads every record once.
func TestKafkaConnectExamplePropertiesRuns(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(kcExample)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "topic_test", "test_error"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, err := doristest.NewServer(doristest.SeedDatabases("test_db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateTable("test_db", "CREATE TABLE test_kafka_tbl (id BIGINT, name VARCHAR(32)) "+
		"DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	_, fePort, _ := strings.Cut(strings.TrimPrefix(srv.FEURL(), "http://"), ":")
	_, myPort, _ := strings.Cut(srv.MySQLAddr(), ":")
	props := strings.NewReplacer("doris.urls=10.10.10.1", "doris.urls=127.0.0.1",
		"doris.http.port=8030", "doris.http.port="+fePort, "doris.query.port=9030", "doris.query.port="+myPort).Replace(string(data))
	if props == string(data) || strings.Count(props, "127.0.0.1") != 1 {
		t.Fatal("the example's addresses were not found: the test would not run it")
	}
	path := filepath.Join(t.TempDir(), "doris-connector-sink.properties")
	if err := os.WriteFile(path, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"DORIS_SINK_KAFKA__BROKERS=" + kc.ListenAddrs()[0], "DORIS_SINK_JOB__DATA_DIR=" + t.TempDir(),
		"DORIS_SINK_METRICS__LISTEN="}
	cfg, err := config.Load(config.LoadOptions{File: path, Environ: func() []string { return env }, Need: config.NeedRun})
	if err != nil {
		t.Fatalf("load the example config: %v", err)
	}
	if cfg.Job.Name != "test-doris-sink" || cfg.Doris.Table != "test_kafka_tbl" || cfg.Kafka.Topic != "topic_test" ||
		cfg.Records.DeadLetterTopic != "test_error" || cfg.Delivery.CheckpointInterval != 120*time.Second {
		t.Fatalf("the example config read as %+v", cfg)
	}

	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("topic_test"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	const n = 30
	for i := range n {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d,"name":"n%d"}`, i, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncBuffer
	log, err := NewLogger(config.Log{Level: "info"}, &logs)
	if err != nil {
		t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var job *Job
	read := 0
	drain := kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
		read = 0
		for _, o := range p.Offsets {
			read += int(o)
		}
		if read >= n {
			job.Connector.Drain() // the example checkpoints every 120 s: drain once all is read
		}
	}})
	job, err = Build(cfg, Deps{Doris: client, Logger: log, FenceCheckInterval: time.Millisecond,
		ConnectorOpts: []kafka.Opt{kafka.WithRecoverBackoff(0, 0), drain}})
	if err != nil {
		t.Fatalf("build: %v\n%s", err, logs.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := job.Connector.Run(ctx); err != nil {
		t.Fatalf("run: %v\n%s", err, logs.String())
	}
	rows, err := srv.Rows("test_db", "test_kafka_tbl")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for i := range int64(n) {
		if seen[i] != 1 {
			t.Errorf("id %d loaded %d times, want once", i, seen[i])
		}
	}
	if len(rows) != n {
		t.Errorf("%d rows, want %d", len(rows), n)
	}
}

// Issue 30: `doris-sink run` with no -c reads its config from DORIS_SINK_*
// alone (a container configured by its environment).
func TestRunWithoutConfigFileReadsEnvironment(t *testing.T) {
	t.Parallel()
	io, _, _ := cmdutil.TestStreams("", false)
	env := []string{"DORIS_SINK_JOB__NAME=orders", "DORIS_SINK_KAFKA__TOPIC=orders", "DORIS_SINK_DORIS__DATABASE=demo",
		"DORIS_SINK_DORIS__TABLE=orders", "DORIS_SINK_DORIS__FE=http://fe-0:8030"}
	var cfg *config.Config
	cmd := NewCmdRun(&cmdutil.Factory{IO: io, Environ: func() []string { return env }}, func(o *Options) error {
		var err error
		cfg, err = o.loadConfig()
		return err
	})
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("run without -c: %v", err)
	}
	if cfg.Job.Name != "orders" || cfg.Kafka.Topic != "orders" || cfg.Doris.FE[0] != "http://fe-0:8030" {
		t.Fatalf("config from the environment: %+v", cfg)
	}
}
