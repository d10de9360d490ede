package run

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A YAML config with kafka.tls.ca_file (TLS + SCRAM broker, SASL password
// from the environment) and doris.tls.ca_file (https FE and BE, password
// from doris.password_file) builds a job that loads every record exactly
// once; debug logs never contain either password.
func TestBuildWithTLSConfig(t *testing.T) {
	t.Parallel()
	const (
		dorisPW = "doris-s3cret-pw"
		kafkaPW = "kafka-s3cret-pw"
		n       = 30
	)
	kpki := doristest.MustCertificates(t, "127.0.0.1")
	dpki := doristest.MustCertificates(t, "localhost", "127.0.0.1")
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"), kfake.TLS(kpki.Server),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "sink", kafkaPW))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, err := doristest.NewServer(doristest.WithTLS(dpki.Server), doristest.SeedDatabases("db"), doristest.User("loader", dorisPW))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateTable("db", "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	pwFile := filepath.Join(dir, "doris.pw")
	if err := os.WriteFile(pwFile, []byte(dorisPW+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`job: {name: tls-job, data_dir: %s}
kafka: {brokers: [%s], topic: orders, sasl: {mechanism: scram-sha-512, user: sink}, tls: {ca_file: %s}}
doris: {fe: [%s], mysql: %s, user: loader, password_file: %s, database: db, table: t, tls: {ca_file: %s}}
delivery: {checkpoint_interval: 30m, checkpoint_max_rows: 7}
metrics: {listen: ""}
log: {level: debug}
`, filepath.Join(dir, "data"), kc.ListenAddrs()[0], kpki.MustWriteCA(t, t.TempDir()), srv.FEURL(), srv.MySQLAddr(), pwFile, dpki.MustWriteCA(t, t.TempDir()))
	cfgPath := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{File: cfgPath, Need: config.NeedRun,
		Environ: func() []string { return []string{config.EnvPrefix + "KAFKA__SASL__PASSWORD=" + kafkaPW} }})
	if err != nil {
		t.Fatal(err)
	}

	// Produce over TLS + SASL: ids 0..n-1 alternating over 2 partitions.
	pcl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DialTLSConfig(cmdutilTLS(t, kpki)),
		kgo.SASL(scramSHA512("sink", kafkaPW)), kgo.DefaultProduceTopic("orders"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
	}
	if err := pcl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pcl.Close()

	var logs syncBuffer
	log, err := NewLogger(cfg.Log, &logs)
	if err != nil {
		t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	var job *Job
	want := map[int32]int64{0: n / 2, 1: n / 2}
	job, err = Build(cfg, Deps{Doris: client, Logger: log, ConnectorOpts: []kafka.Opt{
		kafka.WithRecoverBackoff(0, 0),
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
			for part, o := range want {
				if p.Offsets[part] < o {
					return
				}
			}
			job.Connector.Drain()
		}}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("starting", "config", cfg, "kafka", cfg.Kafka, "doris", cfg.Doris)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := job.Connector.Run(ctx); err != nil {
		t.Fatalf("Run over TLS: %v\nlogs:\n%s", err, logs.String())
	}

	rows, err := srv.Rows("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for i := range int64(n) {
		if seen[i] != 1 {
			t.Errorf("id %d loaded %d times", i, seen[i])
		}
	}
	if len(rows) != n {
		t.Errorf("%d rows, want %d", len(rows), n)
	}
	out := logs.String()
	if !strings.Contains(out, "level=DEBUG") && !strings.Contains(out, "level=INFO") {
		t.Fatalf("no logs captured: %q", out)
	}
	for _, pw := range []string{dorisPW, kafkaPW} {
		if strings.Contains(out, pw) {
			t.Errorf("password %q appears in the logs", pw)
		}
	}
}

// cmdutilTLS is the TLS config the cmd layer builds from pki's CA file.
func cmdutilTLS(t *testing.T, pki *doristest.Certificates) *tls.Config {
	t.Helper()
	tc, err := cmdutil.TLSConfig("kafka.tls.ca_file", pki.MustWriteCA(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func scramSHA512(user, pw string) sasl.Mechanism {
	return scram.Auth{User: user, Pass: pw}.AsSha512Mechanism()
}
