package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// coordEnv is one test's Kafka, Doris and job (job.coordinator: kafka).
// Switching coordinator to "file" makes every scenario below load rows
// twice or lose them (issue 12, scenarios 1-5).
type coordEnv struct {
	t        *testing.T
	kafka    *kfake.Cluster
	doris    *doristest.Server
	adm      *kadm.Client
	prod     *kgo.Client
	dir      string
	produced int
	start    string // kafka.start
	coord    string // job.coordinator, "" = kafka
	subLoads int    // doris.sub_loads, 0 = default
	logs     syncBuffer
}

const coordJob = "coord-job"

func newCoordEnv(t *testing.T) *coordEnv {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, err := doristest.NewServer(doristest.SeedDatabases("db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateTable("db", "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &coordEnv{t: t, kafka: kc, doris: srv, adm: kadm.NewClient(cl), prod: cl, dir: t.TempDir(), start: "earliest"}
}

// produce appends n records, ids continuing, alternating over 2 partitions.
func (e *coordEnv) produce(n int) {
	e.t.Helper()
	var recs []*kgo.Record
	for range n {
		i := e.produced
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
		e.produced++
	}
	if err := e.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// config is the job's config with job.data_dir dataDir.
func (e *coordEnv) config(dataDir string) *config.Config {
	e.t.Helper()
	coord := e.coord
	if coord == "" {
		coord = config.CoordinatorKafka
	}
	yaml := fmt.Sprintf(`job: {name: %s, data_dir: %s, coordinator: %s}
kafka: {brokers: [%s], topic: orders, start: %s}
doris: {fe: [%s], mysql: %s, user: root, database: db, table: t, sub_loads: %d}
delivery: {checkpoint_interval: 30m, checkpoint_max_rows: 4}
metrics: {listen: ""}
`, coordJob, dataDir, coord, e.kafka.ListenAddrs()[0], e.start, e.doris.FEURL(), e.doris.MySQLAddr(), max(e.subLoads, 1))
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

// build builds the job; extra options are added to the connector's.
func (e *coordEnv) build(dataDir string, opts ...kafka.Opt) (*Job, error) {
	e.t.Helper()
	return e.buildWith(dataDir, nil, opts...)
}

// buildWith is build with loader testing knobs.
func (e *coordEnv) buildWith(dataDir string, knobs *loader.TestingKnobs, opts ...kafka.Opt) (*Job, error) {
	e.t.Helper()
	return e.buildWithDeps(dataDir, func(d *Deps) { d.LoaderKnobs = knobs }, opts...)
}

// buildWithDeps is build with Deps changed by set.
func (e *coordEnv) buildWithDeps(dataDir string, set func(*Deps), opts ...kafka.Opt) (*Job, error) {
	e.t.Helper()
	cfg := e.config(dataDir)
	log, err := NewLogger(config.Log{Level: "info"}, &e.logs)
	if err != nil {
		e.t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { client.Close() })
	d := Deps{Doris: client, Logger: log, FenceCheckInterval: time.Millisecond,
		ConnectorOpts: append([]kafka.Opt{kafka.WithRecoverBackoff(0, 0)}, opts...)}
	set(&d)
	return Build(cfg, d)
}

// drainAtEnd returns an option that drains *job once every produced record
// was read.
func (e *coordEnv) drainAtEnd(job **Job) kafka.Opt {
	want := map[int32]int64{0: int64((e.produced + 1) / 2), 1: int64(e.produced / 2)}
	return kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
		for part, o := range want {
			if p.Offsets[part] < o {
				return
			}
		}
		(*job).Connector.Drain()
	}})
}

// runToEnd builds the job in dataDir and runs it until it read every
// produced record and drained.
func (e *coordEnv) runToEnd(dataDir string) {
	e.t.Helper()
	var job *Job
	job, err := e.build(dataDir, e.drainAtEnd(&job))
	if err != nil {
		e.t.Fatalf("build: %v\nlogs:\n%s", err, e.logs.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := job.Connector.Run(ctx); err != nil {
		e.t.Fatalf("run: %v\nlogs:\n%s", err, e.logs.String())
	}
}

// checkExactlyOnce asserts that ids [from, produced) are loaded once each
// and nothing else.
func (e *coordEnv) checkExactlyOnce(from int) {
	e.t.Helper()
	rows, err := e.doris.Rows("db", "t")
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for i := int64(from); i < int64(e.produced); i++ {
		if seen[i] != 1 {
			e.t.Errorf("id %d loaded %d times, want once", i, seen[i])
		}
	}
	if want := e.produced - from; len(rows) != want {
		e.t.Errorf("%d rows, want %d (ids %d..%d once each)", len(rows), want, from, e.produced-1)
	}
}

// Scenario 1: the same job config started twice with different data dirs.
// The second process fences the first, whose next decision fails with a
// fencing error naming the job and the state topic; nothing is loaded twice.
func TestCoordinatorSecondProcessFencesFirst(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	e.produce(20)
	dirA, dirB := filepath.Join(e.dir, "a"), filepath.Join(e.dir, "b")

	// A pauses after its first decision, once that checkpoint is committed
	// and recorded: no transaction of A is in flight when B opens (kfake
	// accepts a stale epoch in a KIP-360 InitProducerID, so an A
	// transaction failing mid-way could re-initialise its producer id and
	// take the epoch back; Kafka answers PRODUCER_FENCED).
	decided, committed := make(chan struct{}), make(chan struct{})
	resume := make(chan struct{})
	var once, onceCommit sync.Once
	a, err := e.buildWith(dirA, &loader.TestingKnobs{AfterCommit: func(id uint64, err error) {
		if id == 1 && err == nil {
			onceCommit.Do(func() { close(committed) })
		}
	}}, kafka.WithOnCheckpoint(func(s kafka.CheckpointStats) {
		if s.Err == nil {
			once.Do(func() { close(decided); <-resume })
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errA := make(chan error, 1)
	go func() { errA <- a.Connector.Run(ctx) }()
	<-decided // A decided its first checkpoint and is paused
	<-committed

	var b *Job
	b, err = e.build(dirB, e.drainAtEnd(&b)) // opening the log fences A
	if err != nil {
		t.Fatal(err)
	}
	close(resume)
	err = <-errA
	if !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("first process: %v, want a fencing error\nlogs:\n%s", err, e.logs.String())
	}
	for _, want := range []string{coordJob, coordlog.StateTopic(coordJob), "fenced"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("fencing error does not name %q: %v", want, err)
		}
	}
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitError {
		t.Errorf("exit code %d for a fenced process, want %d", code, cmdutil.ExitError)
	}
	if err := b.Connector.Run(ctx); err != nil {
		t.Fatalf("second process: %v\nlogs:\n%s", err, e.logs.String())
	}
	e.checkExactlyOnce(0)
}

// Scenario 2: a data dir restored from an older copy. The state comes from
// Kafka, so exactly-once holds even after Doris forgot the labels.
func TestCoordinatorRestoredDataDir(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.produce(10)
	e.runToEnd(dir)
	old := filepath.Join(e.dir, "old")
	if err := os.CopyFS(old, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	e.produce(10)
	e.runToEnd(dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, dir); err != nil {
		t.Fatal(err)
	}
	e.doris.ExpireLabels("db") // Doris no longer remembers the labels written since the copy
	e.produce(6)
	e.runToEnd(dir)
	e.checkExactlyOnce(0)
}

// Scenario 3: a deleted data dir. The job resumes from Kafka's decisions,
// it does not reload from earliest.
func TestCoordinatorDeletedDataDir(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.produce(10)
	e.runToEnd(dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	e.doris.ExpireLabels("db")
	e.produce(6)
	e.runToEnd(dir)
	e.checkExactlyOnce(0)
	fo, err := e.adm.FetchOffsets(context.Background(), "doris-sink-"+coordJob)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		o, _ := fo.Lookup("orders", p)
		if o.At != 8 || !strings.HasPrefix(o.Metadata, "doris-sink:chk=") {
			t.Errorf("group offset of partition %d = %d %q, want 8 with doris-sink:chk= metadata", p, o.At, o.Metadata)
		}
	}
}

// Scenario 4: the topic deleted and recreated. The stored topic ID differs:
// the job stops before loading, naming the topic, what is affected and the
// way out.
func TestCoordinatorRecreatedTopic(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.produce(10)
	e.runToEnd(dir)
	ctx := context.Background()
	if _, err := e.adm.DeleteTopic(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	e.prod.PurgeTopicsFromClient("orders")
	e.produce(4)
	_, err := e.build(dir)
	var rec *coordlog.TopicRecreatedError
	if !errors.As(err, &rec) || rec.Topic != "orders" || rec.StoredID == rec.CurrentID {
		t.Fatalf("build on a recreated topic: %v, want a *TopicRecreatedError", err)
	}
	for _, want := range []string{"orders", "deleted and recreated", "every partition", "checkpoint rebase"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	rows, _ := e.doris.Rows("db", "t")
	if len(rows) != 10 {
		t.Errorf("%d rows after the refusal, want the 10 of the old topic", len(rows))
	}
}

// Scenario 5: kafka.start latest and a crash before the first decision.
// The resolved start is persisted in the log before the first load, so the
// restart does not resolve latest again and loses nothing produced since.
func TestCoordinatorLatestPersistedBeforeFirstLoad(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	e.start = "latest"
	dir := filepath.Join(e.dir, "data")
	e.produce(10) // before the first start: not loaded
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first, abort := context.WithCancel(ctx)
	a, err := e.build(dir, kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterStart: func(kafka.Position) { abort() }}))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Connector.Run(first); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want it stopped before any decision", err)
	}
	e.produce(6) // while the job is down: must be loaded
	e.runToEnd(dir)
	e.checkExactlyOnce(10)
	if !strings.Contains(e.logs.String(), "persisted before") {
		t.Errorf("the restart did not use the persisted first start:\n%s", e.logs.String())
	}
}

// Scenario 1, idle: the first process read everything and has nothing to
// save when the second one starts; it still stops with the fencing error
// (the fence check asks the transaction coordinator), and the second one
// loads what is produced next, once.
func TestCoordinatorIdleFirstProcessStops(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	e.produce(8) // two full checkpoints of 4 rows: nothing left open
	idle := make(chan struct{})
	var once sync.Once
	// Idle: checkpoint 2 (rows 5-8) committed and recorded committed.
	a, err := e.buildWith(filepath.Join(e.dir, "a"), &loader.TestingKnobs{AfterCommit: func(id uint64, err error) {
		if id == 2 && err == nil {
			once.Do(func() { close(idle) })
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errA := make(chan error, 1)
	go func() { errA <- a.Connector.Run(ctx) }()
	<-idle
	var b *Job
	b, err = e.build(filepath.Join(e.dir, "b"), kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
		if p.Offsets[0]+p.Offsets[1] >= 12 {
			b.Connector.Drain()
		}
	}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errA; !errors.Is(err, checkpoint.ErrFenced) || !strings.Contains(err.Error(), coordlog.StateTopic(coordJob)) {
		t.Fatalf("idle first process: %v, want the fencing error naming the state topic", err)
	}
	if !strings.Contains(e.logs.String(), "transaction coordinator says") {
		t.Errorf("the idle process was not stopped by the fence check:\n%s", e.logs.String())
	}
	e.produce(4) // after the first process stopped: only the second can load them
	if err := b.Connector.Run(ctx); err != nil {
		t.Fatalf("second process: %v", err)
	}
	e.checkExactlyOnce(0)
}

// Issue 12, file → kafka: a job that ran with job.coordinator file, the
// last time crashing right after a decision (PRECOMMITTED, uncommitted),
// is switched to kafka. The first kafka start imports the file store into
// the state topic once (the decided checkpoint is committed by recovery,
// nothing reloaded), writes the migration marker, and every record is
// loaded exactly once across the switch. A crash between the import and
// the marker is harmless (the next start finds the Kafka state, skips the
// import and restores the marker); switching back to file is refused by
// the marker.
func TestCoordinatorMigrateFileToKafka(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.coord = config.CoordinatorFile
	e.produce(10)
	e.runToEnd(dir)
	e.produce(10)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	job, err := e.buildWithDeps(dir, func(d *Deps) { d.Failpoints = fps })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := job.Connector.Run(ctx); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("file run: %v, want a crash after decide", err)
	}
	fst, err := checkpoint.ReadFile(dir)
	if err != nil || fst.Decided == nil || fst.Decided.Committed {
		t.Fatalf("file store after the crash: %+v %v, want an uncommitted decision", fst, err)
	}

	e.coord = config.CoordinatorKafka
	e.runToEnd(dir)
	e.checkExactlyOnce(0)
	if !strings.Contains(e.logs.String(), "imported the file checkpoint store into Kafka") {
		t.Errorf("no import logged:\n%s", e.logs.String())
	}
	sn, err := coordlog.ReadSnapshot(ctx, coordJob, []kgo.Opt{kgo.SeedBrokers(e.kafka.ListenAddrs()...)})
	if err != nil {
		t.Fatal(err)
	}
	kst, _, _, err := sn.StateOf("")
	if err != nil || kst.Decided == nil || kst.Decided.ID <= fst.Decided.ID || !kst.Decided.Committed {
		t.Fatalf("kafka state after the switch: %+v %v, want decisions continuing after file checkpoint %d", kst, err, fst.Decided.ID)
	}
	// A restart (the marker lost, as after a crash before it was written)
	// does not import again: the Kafka state is the job's.
	if err := os.Remove(filepath.Join(dir, MigratedMarker)); err != nil {
		t.Fatal(err)
	}
	e.produce(4)
	e.runToEnd(dir)
	e.checkExactlyOnce(0)
	if n := strings.Count(e.logs.String(), "imported the file checkpoint store into Kafka"); n != 1 {
		t.Errorf("imported %d times, want once", n)
	}
	// Switching back to file is refused: that start restored the marker.
	e.coord = config.CoordinatorFile
	var me *MigratedError
	if _, err := e.build(dir); !errors.As(err, &me) {
		t.Fatalf("file start in a migrated data dir: %v, want *MigratedError", err)
	}
}
