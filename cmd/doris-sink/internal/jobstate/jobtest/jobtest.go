// Package jobtest runs a real loader against the Doris emulator so that
// operator-command tests start from the store and Doris states an operator
// meets (a crash at a failpoint, a timed-out or expired label), and check
// afterwards that the job continues exactly once. For tests only.
package jobtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Names of the job's Doris side.
const (
	DB    = "demo"
	Table = "events"
	Name  = "ops-job"
	// DDL is the job's Duplicate Key table: every load shows as rows.
	DDL = "CREATE TABLE events (id BIGINT, v VARCHAR(16)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
)

// Job is one job's emulator, data directory and config file.
type Job struct {
	T      testing.TB
	Srv    *doristest.Server
	Client *doris.Client
	// Dir is job.data_dir (store and ledger).
	Dir string
	// Config is the path of the job's YAML config (job, doris).
	Config string
	// Kafka is set by NewKafka: the job keeps its decisions in the Kafka
	// state topic of this cluster (job.coordinator kafka).
	Kafka *kfake.Cluster
}

// Topic is the source topic of a NewKafka job (the positions the tests
// write are not Kafka positions: nothing reads it).
const Topic = "t"

// NewKafka is New with job.coordinator kafka against an in-process Kafka
// (kfake) holding the source topic Topic.
func NewKafka(t testing.TB) *Job {
	t.Helper()
	return NewKafkaPartitions(t, 1)
}

// NewKafkaPartitions is NewKafka with a source topic of partitions
// partitions.
func NewKafkaPartitions(t testing.TB, partitions int) *Job {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), Topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, client := cmdutil.NewTestDoris(t, DDL)
	root := t.TempDir()
	j := &Job{T: t, Srv: srv, Client: client, Dir: filepath.Join(root, "data"), Config: filepath.Join(root, "job.yaml"), Kafka: kc}
	yaml := fmt.Sprintf("job: {name: %s, data_dir: %s, coordinator: kafka}\nkafka: {brokers: [%s], topic: %s}\n"+
		"doris: {fe: [%s], mysql: %s, user: root, database: %s, table: %s}\n",
		Name, j.Dir, kc.ListenAddrs()[0], Topic, srv.FEURL(), srv.MySQLAddr(), DB, Table)
	if err := os.WriteFile(j.Config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return j
}

// KafkaOpts are the client options of a NewKafka job's cluster.
func (j *Job) KafkaOpts() []kgo.Opt { return []kgo.Opt{kgo.SeedBrokers(j.Kafka.ListenAddrs()...)} }

// OpenStore opens the job's checkpoint store: the file store, or (NewKafka)
// the Kafka store, which fences the job's previous incarnation.
func (j *Job) OpenStore() checkpoint.Store {
	j.T.Helper()
	if j.Kafka == nil {
		st, err := checkpoint.OpenFile(j.Dir, j.Owner())
		if err != nil {
			j.T.Fatal(err)
		}
		return st
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := coordlog.OpenStore(ctx, coordlog.StoreConfig{Log: coordlog.Config{Job: Name, ClientOpts: j.KafkaOpts()},
		Owner: j.Owner(), Topic: Topic})
	if err != nil {
		j.T.Fatal(err)
	}
	return st
}

// New starts an emulator with demo.events and writes the job's config
// (job.coordinator file: the store in Dir).
func New(t testing.TB) *Job {
	t.Helper()
	srv, client := cmdutil.NewTestDoris(t, DDL)
	root := t.TempDir()
	j := &Job{T: t, Srv: srv, Client: client, Dir: filepath.Join(root, "data"), Config: filepath.Join(root, "job.yaml")}
	yaml := fmt.Sprintf("job: {name: %s, data_dir: %s, coordinator: file}\nkafka: {brokers: [127.0.0.1:1], topic: t}\n"+
		"doris: {fe: [%s], mysql: %s, user: root, database: %s, table: %s}\n",
		Name, j.Dir, srv.FEURL(), srv.MySQLAddr(), DB, Table)
	if err := os.WriteFile(j.Config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return j
}

// Owner is the store owner of the job (the source is "kafka:t" for a
// NewKafka job, as `run` names it).
func (j *Job) Owner() checkpoint.Owner {
	o := checkpoint.Owner{Job: Name, DB: DB, Table: Table, Writer: "0"}
	if j.Kafka != nil {
		o.Source = "kafka:" + Topic
	}
	return o
}

// open opens a loader on the job's store.
func (j *Job) open(fps *loader.Failpoints) *loader.Loader {
	j.T.Helper()
	st := j.OpenStore()
	l, err := loader.New(j.Client, loader.Config{Job: Name, DB: DB, Table: Table, Source: j.Owner().Source, Store: st, LedgerDir: j.Dir,
		Failpoints: fps, Retry: loader.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxElapsed: 5 * time.Second}})
	if err != nil {
		st.Close()
		j.T.Fatal(err)
	}
	return l
}

// Row is the JSON row of source record i.
func Row(i int) []byte { return fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i) }

func pos(i int) json.RawMessage { return json.RawMessage(`{"next":` + strconv.Itoa(i) + `}`) }

func next(p json.RawMessage) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var v struct{ Next int }
	err := json.Unmarshal(p, &v)
	return v.Next, err
}

func drive(ctx context.Context, l *loader.Loader, p json.RawMessage, n, every int) error {
	from, err := next(p)
	if err != nil {
		return err
	}
	for i := from; i < n; i++ {
		if err := l.Write(ctx, Row(i)); err != nil {
			return err
		}
		if (i+1)%every == 0 || i+1 == n {
			if err := l.Checkpoint(ctx, pos(i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// CrashAt loads records [0, n) with a checkpoint every `every` records
// until failpoint fp crashes the loader (after skip passes); it fails the
// test if the loader does not crash.
func (j *Job) CrashAt(fp string, skip, n, every int) {
	j.T.Helper()
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(fp, loader.Crash().Skip(skip)); err != nil {
		j.T.Fatal(err)
	}
	ctx := context.Background()
	l := j.open(fps)
	p, err := l.Recover(ctx)
	if err == nil {
		err = drive(ctx, l, p, n, every)
	}
	cerr := l.Close(ctx)
	if !errors.Is(err, loader.ErrCrashed) && !errors.Is(cerr, loader.ErrCrashed) {
		j.T.Fatalf("loader did not crash at %s: %v, close: %v", fp, err, cerr)
	}
}

// Recover opens a loader, recovers and closes it: the error a restarting
// job meets (nil when it would continue).
func (j *Job) Recover() error {
	j.T.Helper()
	ctx := context.Background()
	l := j.open(nil)
	_, err := l.Recover(ctx)
	if cerr := l.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// RunToEnd restarts the job and loads records [0, n), recovering after
// ErrNeedRecover; it fails the test on any other error.
func (j *Job) RunToEnd(n, every int) {
	j.T.Helper()
	ctx := context.Background()
	l := j.open(nil)
	defer l.Close(ctx)
	for range 10 {
		p, err := l.Recover(ctx)
		if err != nil {
			j.T.Fatalf("recover: %v", err)
		}
		err = drive(ctx, l, p, n, every)
		if err == nil {
			if err := l.Close(ctx); err != nil {
				j.T.Fatalf("close: %v", err)
			}
			return
		}
		if !errors.Is(err, loader.ErrNeedRecover) {
			j.T.Fatalf("load: %v", err)
		}
	}
	j.T.Fatal("no progress after 10 recoveries")
}

// Counts returns how often each id is in the table.
func (j *Job) Counts() map[int64]int {
	j.T.Helper()
	rows, err := j.Srv.Rows(DB, Table)
	if err != nil {
		j.T.Fatal(err)
	}
	c := map[int64]int{}
	for _, r := range rows {
		id, _ := r[0].(int64)
		c[id]++
	}
	return c
}

// CheckExactlyOnce fails the test unless the table holds ids [0, n) once
// each and nothing else.
func (j *Job) CheckExactlyOnce(n int) {
	j.T.Helper()
	c := j.Counts()
	for i := range n {
		if c[int64(i)] != 1 {
			j.T.Errorf("id %d is in the table %d times, want once", i, c[int64(i)])
		}
	}
	if len(c) != n {
		j.T.Errorf("table holds %d distinct ids, want %d", len(c), n)
	}
}

// State reads the job's store (read-only: a Kafka job's state topic is
// read without fencing anything).
func (j *Job) State() *checkpoint.State {
	j.T.Helper()
	if j.Kafka != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sn, err := coordlog.ReadSnapshot(ctx, Name, j.KafkaOpts())
		if err != nil {
			j.T.Fatal(err)
		}
		st, _, _, err := sn.StateOf("")
		if err != nil {
			j.T.Fatal(err)
		}
		return st
	}
	st, err := checkpoint.ReadFile(j.Dir)
	if err != nil {
		j.T.Fatal(err)
	}
	return st
}
