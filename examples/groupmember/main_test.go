package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
	"github.com/doris-sink/doris-sink/loader/kafka/kafkatest"
)

// Two members of one job of two slots run in-process against kfake and
// the Doris emulator: both own a slot and load; then member a drains and
// leaves mid-load (its slot is handed over: b takes it and resumes from
// its last decision) while records keep arriving; finally every record is
// in the table exactly once, each row carrying its source partition and
// offset (the service's own columns). The waits are hang guards, not
// timing assertions: each ends on a member event.
func TestTwoMembersHandOverExactlyOnce(t *testing.T) {
	t.Parallel()
	const parts = 4
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, "orders"),
		kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	// Kafka's rule kfake lacks: a member parked in its JoinGroup or
	// SyncGroup is not expired by its session timeout.
	stopKeep, err := kafkatest.KeepParkedMembers(kc, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopKeep)
	srv, err := doristest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateDatabase("demo"); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateTable("demo", "CREATE TABLE orders (id BIGINT, v VARCHAR(32), src_partition INT, src_offset BIGINT) "+
		"DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	produced := 0
	produce := func(n int) {
		t.Helper()
		var recs []*kgo.Record
		for range n {
			recs = append(recs, &kgo.Record{Partition: int32(produced % parts), Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, produced, produced)})
			produced++
		}
		if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// events wakes the waiter on every checkpoint and assignment.
	var mu sync.Mutex
	events := make(chan struct{}, 1)
	notify := func() {
		select {
		case events <- struct{}{}:
		default:
		}
	}
	decided := map[string]int{}     // decided checkpoints with rows, per member
	decidedEnd := map[int32]int64{} // the decided next offset of each partition
	dir := t.TempDir()
	type running struct {
		m    *group.Member
		done chan error
	}
	start := func(name string) running {
		cfg := config{Brokers: kc.ListenAddrs(), Topic: "orders", Job: "gm", Group: "doris-sink-gm", Slots: 2,
			FE: []string{srv.FEURL()}, User: "root", DB: "demo", Table: "orders", DataDir: filepath.Join(dir, name),
			PartitionColumn: "src_partition", OffsetColumn: "src_offset",
			CheckpointInterval: 200 * time.Millisecond, CheckpointMaxRows: 7,
			SessionTimeout: time.Second, RebalanceTimeout: 5 * time.Second,
			MemberOpts: []kgo.Opt{kgo.HeartbeatInterval(50 * time.Millisecond)},
			OnCheckpoint: func(_ int, st kafka.CheckpointStats) {
				if st.Err == nil {
					mu.Lock()
					if st.Rows > 0 {
						decided[name]++
					}
					for p, o := range st.End.PerTopic()["orders"] {
						decidedEnd[p] = max(decidedEnd[p], o)
					}
					mu.Unlock()
				}
				notify()
			},
			OnSlots: notify}
		m, err := newService(cfg, testLogger(name)).member()
		if err != nil {
			t.Fatal(err)
		}
		r := running{m: m, done: make(chan error, 1)}
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			r.done <- m.Run(context.Background())
		}()
		t.Cleanup(func() {
			m.Drain()
			<-ended
		})
		return r
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		guard := time.NewTimer(60 * time.Second)
		defer guard.Stop()
		for !cond() {
			select {
			case <-events:
			case <-guard.C:
				t.Fatalf("hang guard: %s never happened", what)
			}
		}
	}
	owns := func(r running) int { return len(r.m.Ownership().Owned) }

	produce(40)
	a, b := start("a"), start("b")
	waitUntil("both members own a slot and decided rows", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return owns(a) == 1 && owns(b) == 1 && decided["a"] > 0 && decided["b"] > 0
	})
	produce(40)
	a.m.Drain() // a leaves mid-load: its slot drains, then moves to b
	produce(40)
	if err := <-a.done; err != nil {
		t.Fatalf("member a's drain: %v", err)
	}
	produce(40)
	waitUntil("b owns both slots", func() bool { return owns(b) == 2 })
	waitUntil("every record decided", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for p := range int32(parts) {
			if decidedEnd[p] < int64(produced/parts) {
				return false
			}
		}
		return true
	})
	b.m.Drain()
	if err := <-b.done; err != nil {
		t.Fatalf("member b's drain: %v", err)
	}

	rows, err := srv.Rows("demo", "orders")
	if err != nil {
		t.Fatal(err)
	}
	type source struct {
		p   int64
		off int64
	}
	ids, sources := map[int64]int{}, map[source]int{}
	for _, r := range rows {
		id, _ := r[0].(int64)
		p, _ := r[2].(int64)
		off, _ := r[3].(int64)
		ids[id]++
		sources[source{p, off}]++
	}
	if len(rows) != produced || len(ids) != produced || len(sources) != produced {
		t.Fatalf("%d rows, %d distinct ids, %d distinct (partition, offset) for %d records: want each once",
			len(rows), len(ids), len(sources), produced)
	}
	for i := range produced {
		if ids[int64(i)] != 1 {
			t.Errorf("record %d loaded %d times", i, ids[int64(i)])
		}
		// Records go round-robin: record i is offset i/parts of partition i%parts.
		if s := (source{int64(i % parts), int64(i / parts)}); sources[s] != 1 {
			t.Errorf("partition %d offset %d loaded %d times", s.p, s.off, sources[s])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if decided["a"] == 0 || decided["b"] == 0 {
		t.Errorf("decided checkpoints with rows per member %v: want both members to have loaded", decided)
	}
}

// The flags default to their GROUPMEMBER_ variables, and the required
// ones are named when missing.
func TestFlagsFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GROUPMEMBER_TOPIC": "orders", "GROUPMEMBER_JOB": "j", "GROUPMEMBER_DB": "demo",
		"GROUPMEMBER_TABLE": "t", "GROUPMEMBER_DATA_DIR": "/d", "GROUPMEMBER_SLOTS": "3"}
	c, err := parseFlags(newFlagSet(), []string{"-brokers", "a:1,b:2"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Slots != 3 || c.Group != "doris-sink-j" || len(c.Brokers) != 2 || c.DataDir != "/d" {
		t.Errorf("config %+v: want 3 slots, group doris-sink-j, two brokers, data dir /d", c)
	}
	if _, err := parseFlags(newFlagSet(), nil, func(string) string { return "" }); err == nil {
		t.Error("no topic, job, db, table or data dir: want an error naming the first missing")
	}
	if _, err := keptInstanceID(filepath.Join(t.TempDir(), "x")); err != nil {
		t.Fatal(err)
	}
	d := t.TempDir()
	id1, err := keptInstanceID(d)
	if err != nil {
		t.Fatal(err)
	}
	if id2, err := keptInstanceID(d); err != nil || id2 != id1 {
		t.Errorf("instance id read again = %q, %v; want %q (kept)", id2, err, id1)
	}
	if err := os.WriteFile(filepath.Join(d, "instance-id"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keptInstanceID(d); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty instance id file: %v, want an error naming it", err)
	}
}

// testLogger is member name's logger: discarded unless GROUPMEMBER_TEST_LOG
// is set (then to stderr).
func testLogger(name string) *slog.Logger {
	if os.Getenv("GROUPMEMBER_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("member", name)
}
