package reconcile_test

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

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/reconcile"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// --audit-job on a real audit job (the connector loads order_audit from a
// two-partition topic with records.metadata_columns): the audit rows equal
// the decisions' loaded rows, no offset twice, none past the evidence —
// exit 0; an event written twice and a row no decision loaded: exit 5.
func TestReconcileAuditJobLinksOffsets(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, stateSeqDDL, nil)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kf.Close)
	var recs []*kgo.Record
	var evs []event
	for _, ph := range orderEvents(12) {
		evs = append(evs, ph...)
	}
	for _, e := range evs {
		recs = append(recs, &kgo.Record{Topic: "orders", Key: fmt.Appendf(nil, "%d", e.id),
			Value: fmt.Appendf(nil, `{"order_id":%d,"op_version":%d,"status":%q,"amount":%s}`, e.id, e.version, e.status, e.amount)})
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	auditCfg := filepath.Join(t.TempDir(), "audit.yaml")
	yaml := fmt.Sprintf(`job: {name: audit, data_dir: %q}
kafka: {brokers: [%q], topic: orders, group: g-audit, start: earliest}
doris: {fe: [%q], mysql: %q, user: root, database: demo, table: order_audit, format: json}
delivery: {guarantee: exactly_once, checkpoint_interval: 10m, checkpoint_max_rows: 7}
records: {metadata_columns: {partition: src_partition, offset: src_offset}}
`, filepath.Join(t.TempDir(), "data"), kf.ListenAddrs()[0], p.srv.FEURL(), p.srv.MySQLAddr())
	if err := os.WriteFile(auditCfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{File: auditCfg, Need: config.NeedRun})
	if err != nil {
		t.Fatal(err)
	}
	var conn *kafka.Connector
	job, err := run.Build(cfg, run.Deps{Doris: p.client, ConnectorOpts: []kafka.Opt{
		kafka.WithKgoOpts(kgo.FetchMaxWait(50 * time.Millisecond)),
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(kafka.Position) {
			if conn.Metrics().Records.Load() >= int64(len(evs)) {
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
		t.Fatalf("audit job: %v", err)
	}
	args := []string{"--audit", "demo.order_audit", "--key", "order_id", "--version", "op_version",
		"--delete-when", "status = 'DELETED'", "--audit-job", auditCfg}
	// The state table is empty: only the audit link is asked about here.
	code, out, errOut := p.run(t, append(args, "-o", "json")...)
	rep := jsonReport(t, out)
	l := rep.AuditLink
	if l == nil || !l.Equal || l.Rows != int64(len(evs)) || l.EvidenceRows != int64(len(evs)) || l.Decisions < 2 {
		t.Fatalf("audit link %+v (exit %d, %s)", l, code, errOut)
	}
	for _, k := range []string{reconcile.KindDuplicateOffset, reconcile.KindBeyondEvidence} {
		if c := rep.Check(k); c == nil || c.Count != 0 {
			t.Fatalf("%s on correct data: %+v", k, c)
		}
	}
	// An event written twice (same partition and offset), and a row at an
	// offset no decision covers.
	exec := func(q string) {
		t.Helper()
		s, err := p.client.Session(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("INSERT INTO demo.order_audit SELECT order_id, op_version, status, amount, src_partition, src_offset FROM demo.order_audit WHERE src_partition = 1 AND src_offset = 2")
	exec("INSERT INTO demo.order_audit VALUES (99, 1, 'CREATED', 1.00, 0, 100000)")
	code, out, errOut = p.run(t, args...)
	if code != cmdutil.ExitGaps {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"duplicate-offset: 1 key(s) (src_partition, src_offset), first 1: (1, 2)",
		"beyond-evidence: 1 key(s) (src_partition, src_offset), first 1: (0, 100000)",
		fmt.Sprintf("MISMATCH: the audit table holds %d rows within the decisions' ranges, the decisions loaded %d (+1)", len(evs)+1, len(evs))} {
		if !strings.Contains(errOut, want) {
			t.Errorf("output lacks %q:\n%s", want, errOut)
		}
	}
}
