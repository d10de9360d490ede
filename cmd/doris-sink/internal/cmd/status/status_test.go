package status

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

const ddl = "CREATE TABLE orders (id BIGINT, v VARCHAR(16)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"

// env is a kfake topic "orders" (2 partitions), a Doris emulator with
// demo.orders and a job config whose metrics.listen is listen.
type env struct {
	t       *testing.T
	kc      *kfake.Cluster
	cfgPath string
	dataDir string
	fe      string
	mysql   string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, _ := cmdutil.NewTestDoris(t, ddl)
	dir := t.TempDir()
	return &env{t: t, kc: kc, cfgPath: filepath.Join(dir, "job.yaml"), dataDir: filepath.Join(dir, "data"),
		fe: srv.FEURL(), mysql: srv.MySQLAddr()}
}

// writeConfig writes the job config with metrics.listen = listen.
func (e *env) writeConfig(listen string) {
	e.t.Helper()
	yaml := fmt.Sprintf(`job: {name: st-job, data_dir: %s}
kafka: {brokers: [%s], topic: orders}
doris: {fe: [%s], mysql: %s, database: demo, table: orders}
delivery: {checkpoint_interval: 30m, checkpoint_max_rows: 5}
metrics: {listen: "%s", log_interval: 0}
`, e.dataDir, e.kc.ListenAddrs()[0], e.fe, e.mysql, listen)
	if err := os.WriteFile(e.cfgPath, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// produce writes ids [from, to), id i to partition i%2.
func (e *env) produce(from, to int) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// status runs `doris-sink status -c <config>` with extra args.
func (e *env) status(tty bool, args ...string) (string, error) {
	e.t.Helper()
	f, out, _ := cmdutil.NewTestFactory(tty)
	cmd := NewCmdStatus(f, nil)
	cmd.SetArgs(append([]string{"-c", e.cfgPath}, args...))
	cmd.SetOut(f.IO.Out)
	err := cmd.Execute()
	return out.String(), err
}

func (e *env) statusJSON() *Result {
	e.t.Helper()
	out, err := e.status(false, "-o", "json")
	if err != nil {
		e.t.Fatalf("status: %v", err)
	}
	var r Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.t.Fatalf("status -o json is not JSON: %v: %q", err, out)
	}
	return &r
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func val(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// A job that never ran: "not running", no store, no checkpoint, and the
// lag from Kafka is the whole log (kafka.start earliest).
func TestStatusJobNeverRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.produce(0, 6)
	e.writeConfig(closedAddr(t))
	r := e.statusJSON()
	if r.State != StateNotRunning || r.Process.Running || !strings.Contains(r.Process.Detail, "nothing listens") {
		t.Errorf("state %q process %+v, want not running", r.State, r.Process)
	}
	if r.Store.Found || r.LastCheckpoint != nil || r.Job != "st-job" || r.Table != "demo.orders" || r.Topic != "orders" {
		t.Errorf("never run: %+v", r)
	}
	if len(r.Partitions) != 2 || val(r.Lag) != 6 {
		t.Fatalf("partitions %+v lag %d, want 2 partitions and lag 6", r.Partitions, val(r.Lag))
	}
	for _, p := range r.Partitions {
		if p.Loaded != nil || val(p.HighWatermark) != 3 || val(p.Lag) != 3 || p.Read != nil {
			t.Errorf("partition %+v, want nothing loaded, high watermark 3, lag 3", p)
		}
	}
	tty, err := e.status(true)
	if err != nil || !strings.Contains(tty, "State:") || !strings.Contains(tty, "not running") ||
		!strings.Contains(tty, "the job never ran") || !strings.Contains(tty, "PARTITION") {
		t.Errorf("tty output (%v):\n%s", err, tty)
	}
	pipe, _ := e.status(false)
	if !strings.Contains(pipe, "State\tnot running\n") || !strings.Contains(pipe, "0\t-\t-\t3\t3\n") {
		t.Errorf("piped output:\n%s", pipe)
	}
}

// A running job answers on metrics.listen: healthy (running, every record
// loaded, lag 0, read positions from the process), then stalled (the
// connector's stall reason), then stopped (not running, the store's
// positions, lag to records produced since).
func TestStatusRunningStalledStopped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 10
	e.produce(0, n)

	m := metrics.New()
	hs := httptest.NewServer(m.Handler())
	defer hs.Close()
	e.writeConfig(hs.Listener.Addr().String())
	cfg, err := config.Load(config.LoadOptions{File: e.cfgPath, Need: config.NeedRun})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	loadedAll := make(chan struct{})
	job, err := run.Build(cfg, run.Deps{Doris: client, Metrics: m, ConnectorOpts: []kafka.Opt{
		kafka.WithRecoverBackoff(0, 0),
		kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterStart: func(kafka.Position) { m.SetReady(true) }}),
		kafka.WithOnCheckpoint(func(s kafka.CheckpointStats) {
			if s.Err == nil && s.End.Offsets[0] == n/2 && s.End.Offsets[1] == n/2 {
				close(loadedAll)
			}
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- job.Connector.Run(ctx) }()
	select {
	case <-loadedAll:
	case err := <-runErr:
		t.Fatalf("Run ended before loading everything: %v", err)
	}

	// Running, healthy.
	r := e.statusJSON()
	if r.State != metrics.StateRunning || !r.Process.Running || r.Process.PID != os.Getpid() || r.Stall != nil {
		t.Errorf("running: state %q process %+v stall %+v", r.State, r.Process, r.Stall)
	}
	if c := r.LastCheckpoint; c == nil || c.ID < 2 || c.TxnID == 0 || c.AgeSeconds < 0 {
		t.Errorf("last checkpoint %+v, want the second decision", c)
	}
	if val(r.Lag) != 0 || len(r.Partitions) != 2 {
		t.Errorf("lag %d partitions %+v, want lag 0 over 2 partitions", val(r.Lag), r.Partitions)
	}
	for _, p := range r.Partitions {
		if val(p.Loaded) != n/2 || val(p.Read) != n/2 || val(p.HighWatermark) != n/2 || val(p.Lag) != 0 {
			t.Errorf("running partition %d: loaded %d read %d high watermark %d lag %d, want loaded = read = high watermark = %d, lag 0",
				p.Partition, val(p.Loaded), val(p.Read), val(p.HighWatermark), val(p.Lag), n/2)
		}
	}

	// Stalled: the connector's reason reaches status (and /readyz).
	const reason = "precommit demo.orders label st-job:demo-orders:0:3: BE 127.0.0.1:8040 connection refused"
	job.Connector.Metrics().SetStall(time.Now().Add(-30*time.Second), reason, false)
	r = e.statusJSON()
	if r.State != metrics.StateStalled || r.Stall == nil || r.Stall.Reason != reason || r.Stall.Seconds < 30 {
		t.Errorf("stalled: state %q stall %+v", r.State, r.Stall)
	}
	if tty, _ := e.status(true); !strings.Contains(tty, "stalled for") || !strings.Contains(tty, reason) {
		t.Errorf("stalled tty output:\n%s", tty)
	}
	job.Connector.Metrics().ClearStall()

	// Stopped after decisions.
	job.Connector.Drain()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	hs.Close()
	e.produce(n, n+4)
	r = e.statusJSON()
	if r.State != StateNotRunning || r.Process.Running || !r.Store.Found || r.LastCheckpoint == nil || !r.LastCheckpoint.Committed {
		t.Errorf("stopped: state %q process %+v store %+v checkpoint %+v", r.State, r.Process, r.Store, r.LastCheckpoint)
	}
	if val(r.Lag) != 4 {
		t.Errorf("stopped: lag %d, want the 4 records produced since", val(r.Lag))
	}
	for _, p := range r.Partitions {
		if val(p.Loaded) != n/2 || val(p.HighWatermark) != n/2+2 || val(p.Lag) != 2 || p.Read != nil {
			t.Errorf("stopped partition %+v, want loaded %d, high watermark %d, lag 2, no read position", p, n/2, n/2+2)
		}
	}
}

// Another job's process on metrics.listen is not taken for this one: the
// state is unknown and the detail names what answers; a wildcard listen
// host is asked on loopback.
func TestStatusOtherProcessAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := metrics.New()
	if err := m.RegisterConnector("payments", "demo.payments", &kafka.Metrics{}); err != nil {
		t.Fatal(err)
	}
	m.SetReady(true)
	hs := httptest.NewServer(m.Handler())
	defer hs.Close()
	_, port, err := net.SplitHostPort(hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	e.writeConfig("0.0.0.0:" + port)
	r := e.statusJSON()
	if r.State != StateUnknown || r.Process.Running || !strings.Contains(r.Process.Detail, "demo.payments") ||
		r.Process.Addr != "127.0.0.1:"+port {
		t.Errorf("another job answering: state %q process %+v, want unknown naming demo.payments, asked on 127.0.0.1", r.State, r.Process)
	}
	e.writeConfig("")
	if r := e.statusJSON(); r.State != StateUnknown || !strings.Contains(r.Process.Detail, "metrics.listen is empty") {
		t.Errorf("metrics.listen empty: state %q process %+v", r.State, r.Process)
	}
}
