package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// A job routing one topic to two tables (routing.table_field), with dead
// letters, leaves one ledger entry per txn; verify sums a checkpoint's
// txns (its offsets are every table's rows plus its dead letters), checks
// each txn's label in Doris, and compares doris.table's count with its own
// txns only: correct data reconciles with no finding.
func TestVerifyRoutedJob(t *testing.T) {
	t.Parallel()
	k := newKafkaEnv(t)
	k.topic("in-routed", nil)
	k.topic("dead-routed", nil)
	var vs [][]byte
	for i := range 12 {
		tbl := "events"
		if i%2 == 1 {
			tbl = "others"
		}
		v := fmt.Appendf(nil, `{"id":%d,"v":"v","tbl":%q}`, i, tbl)
		if i == 7 {
			v = []byte("not json")
		}
		vs = append(vs, v)
	}
	k.produce("in-routed", nil, vs)
	srv, client := cmdutil.NewTestDoris(t, dupDDL)
	if err := srv.CreateTable("demo", strings.Replace(dupDDL, "TABLE events", "TABLE others", 1)); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		Job:   config.Job{Name: "e2e", DataDir: filepath.Join(t.TempDir(), "data")},
		Kafka: config.Kafka{Brokers: k.brokers, Topic: "in-routed", Group: "g-routed", Start: config.Start{Mode: config.StartEarliest}},
		Doris: config.Doris{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root", Database: "demo", Table: "events",
			Format: "json", Properties: map[string]string{"max_filter_ratio": "0"}},
		Delivery: config.Delivery{Guarantee: config.ExactlyOnce, CheckpointInterval: time.Hour, CheckpointMaxRows: 4},
		Records:  config.Records{Format: config.RecordsJSON, DeadLetterTopic: "dead-routed", DeadLetterDelivery: config.DeadLetterAtLeastOnce},
		Routing:  config.Routing{TableField: "tbl"},
	}
	var conn *kafka.Connector
	job, err := run.Build(cfg, run.Deps{Doris: client, ConnectorOpts: []kafka.Opt{
		kafka.WithKgoOpts(kgo.FetchMaxWait(50 * time.Millisecond)),
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(kafka.Position) {
			if conn.Metrics().Records.Load() >= 12 {
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
	rep, err := VerifyConfig(context.Background(), &cmdutil.Factory{Now: time.Now}, cfg, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil || len(rep.Findings) > 0 {
		t.Fatalf("verify on correct routed data: %v: %+v", err, rep.Findings)
	}
	if rep.RowsLoaded != 11 || rep.Offsets != 12 {
		t.Errorf("verify counted %d rows loaded over %d offsets, want 11 over 12", rep.RowsLoaded, rep.Offsets)
	}
	if tc := rep.TableCount; tc == nil || tc.Status != TableCountOK || tc.Rows != 6 || tc.LedgerRows != 6 {
		t.Errorf("table count %+v, want ok with the 6 rows of demo.events", tc)
	}
}
