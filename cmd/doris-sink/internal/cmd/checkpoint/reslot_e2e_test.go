package checkpoint

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// e2eWait bounds every wait of the end-to-end test (a hang fails it).
const e2eWait = 2 * time.Minute

// decidedTap collects, from run's JSON log, the highest decided end offset
// of every partition ("checkpoint decided" lines) and wakes waiters.
type decidedTap struct {
	mu      sync.Mutex
	ends    map[int32]int64
	changed chan struct{}
}

func newDecidedTap() (*decidedTap, io.WriteCloser) {
	tap := &decidedTap{ends: map[int32]int64{}, changed: make(chan struct{})}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil || m["msg"] != "checkpoint decided" {
				continue
			}
			b, _ := json.Marshal(m["end"])
			pos, ok, err := kafka.ParsePosition(b)
			if err != nil || !ok {
				continue
			}
			tap.mu.Lock()
			for p, o := range pos.Of("orders") {
				tap.ends[p] = max(tap.ends[p], o)
			}
			close(tap.changed)
			tap.changed = make(chan struct{})
			tap.mu.Unlock()
		}
	}()
	return tap, pw
}

// e2eJob is one job on kfake and the Doris emulator, run in-process as
// `doris-sink run` members.
type e2eJob struct {
	t        *testing.T
	kc       *kfake.Cluster
	srv      *doristest.Server
	client   *doris.Client
	prod     *kgo.Client
	dir      string
	parts    int32
	produced int
	perPart  map[int32]int64
}

func newE2EJob(t *testing.T, parts int32) *e2eJob {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, "orders"), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	srv, client := cmdutil.NewTestDoris(t, "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return &e2eJob{t: t, kc: kc, srv: srv, client: client, prod: prod, dir: t.TempDir(), parts: parts, perPart: map[int32]int64{}}
}

// produce appends 10 records to every partition (every slot's share is a
// multiple of delivery.checkpoint_max_rows 5: each ends in a decision).
func (e *e2eJob) produce() {
	e.t.Helper()
	var recs []*kgo.Record
	for p := range e.parts {
		for range 10 {
			i := e.produced
			recs = append(recs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
			e.produced++
			e.perPart[p]++
		}
	}
	if err := e.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// config writes the job's config with job.slots slots for member name and
// returns its path (every member has its own data dir, as on another
// machine).
func (e *e2eJob) config(name string, slots int) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name+".yaml")
	yaml := fmt.Sprintf(`job: { name: rs, data_dir: %s, slots: %d }
kafka: { brokers: [%s], topic: orders, start: earliest, session_timeout: 10s, rebalance_timeout: 20s }
doris: { fe: [%s], mysql: %s, user: root, database: demo, table: t }
delivery: { checkpoint_interval: 30m, checkpoint_max_rows: 5 }
metrics: { listen: "" }
log: { format: json, level: info }
`, filepath.Join(e.dir, "data-"+name), slots, strings.Join(e.kc.ListenAddrs(), ", "), e.srv.FEURL(), e.srv.MySQLAddr())
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// runMembers runs one member per name with job.slots slots until every
// produced record is decided, calls during (if set) while they run, then
// stops them with SIGTERM.
func (e *e2eJob) runMembers(slots int, during func(), names ...string) {
	e.t.Helper()
	type member struct {
		sigs   chan os.Signal
		done   chan error
		exited chan struct{} // closed once done has its value
	}
	var ms []member
	var taps []*decidedTap
	// A failure below ends the test with members still running; they are
	// cancelled and awaited first (cleanups run last-registered first), or
	// the emulator's Close would wait for their in-flight loads for ever.
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(func() {
		cancel()
		for i, m := range ms {
			select {
			case <-m.exited:
			case <-time.After(e2eWait):
				e.t.Errorf("member %s did not stop after its context was cancelled", names[i])
			}
		}
	})
	for _, name := range names {
		tap, w := newDecidedTap()
		taps = append(taps, tap)
		m := member{sigs: make(chan os.Signal, 1), done: make(chan error, 1), exited: make(chan struct{})}
		io := &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: w}
		f := &cmdutil.Factory{IO: io}
		cmd := run.NewCmdRun(f, func(o *run.Options) error {
			o.Signals = m.sigs
			return run.Run(ctx, o)
		})
		cmd.SetArgs([]string{"-c", e.config(name, slots)})
		cmd.SetContext(context.Background())
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		go func() {
			err := cmd.Execute()
			w.Close()
			m.done <- err
			close(m.exited)
		}()
		ms = append(ms, m)
	}
	deadline := time.After(e2eWait)
	for {
		ends := map[int32]int64{}
		var wake []chan struct{}
		for _, tap := range taps {
			tap.mu.Lock()
			for p, o := range tap.ends {
				ends[p] = max(ends[p], o)
			}
			wake = append(wake, tap.changed)
			tap.mu.Unlock()
		}
		all := true
		for p, n := range e.perPart {
			all = all && ends[p] >= n
		}
		if all {
			break
		}
		any := make(chan struct{}, len(wake))
		for _, ch := range wake {
			go func() { <-ch; any <- struct{}{} }()
		}
		select {
		case <-any:
		case err := <-ms[0].done:
			e.t.Fatalf("member %s ended before every record was decided (%v of %v): %v", names[0], ends, e.perPart, err)
		case <-deadline:
			e.t.Fatalf("not every record decided: %v of %v", ends, e.perPart)
		}
	}
	if during != nil {
		during()
	}
	for i, m := range ms {
		m.sigs <- syscall.SIGTERM
		select {
		case err := <-m.done:
			if err != nil {
				e.t.Fatalf("member %s: %v", names[i], err)
			}
		case <-time.After(e2eWait):
			e.t.Fatalf("member %s did not stop", names[i])
		}
	}
}

func (e *e2eJob) checkExactlyOnce() {
	e.t.Helper()
	rows, err := e.srv.Rows("demo", "t")
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for i := int64(0); i < int64(e.produced); i++ {
		if seen[i] != 1 {
			e.t.Errorf("id %d loaded %d times", i, seen[i])
		}
	}
	if len(rows) != e.produced {
		e.t.Errorf("%d rows for %d records", len(rows), e.produced)
	}
}

func (e *e2eJob) reslot(slots int) *ReslotResult {
	e.t.Helper()
	cfg, err := config.Load(config.LoadOptions{File: e.config("operator", slots), Need: config.NeedRun})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	res, err := Reslot(ctx, cfg, ReslotRequest{Slots: slots, Doris: e.client, By: "e2e"})
	if err != nil {
		e.t.Fatalf("reslot to %d: %v", slots, err)
	}
	return res
}

// Issue 12, end to end: a standalone job loads, is re-sliced to 3 writer
// slots, runs as two members of its group, then as one other member, is
// re-sliced back to 1 and runs standalone again: every record is in the
// table exactly once, each member resuming the positions the reslot moved
// to its slots; while the members run the group view names the owners.
func TestReslotEndToEnd(t *testing.T) {
	t.Parallel()
	e := newE2EJob(t, 6)
	e.produce()
	e.runMembers(1, nil, "solo")
	e.checkExactlyOnce()
	e.checkSlotTopic(1) // a standalone start creates the one-partition slot topic (the layout's arbiter)

	if res := e.reslot(3); res.FromSlots != 1 || len(res.Slots) != 3 || res.SlotTopicAction != SlotTopicRaise {
		t.Fatalf("reslot 1→3: %+v", res)
	}
	e.checkSlotTopic(3)
	e.produce()
	e.runMembers(3, func() { e.checkOwners(3, 2, true) }, "a", "b")
	e.checkExactlyOnce()
	e.produce()
	e.runMembers(3, func() { e.checkOwners(3, 1, false) }, "c") // c on another machine: no local state
	e.checkExactlyOnce()

	if res := e.reslot(1); res.FromSlots != 3 || strings.Join(res.Retired, ",") != "1,2" || res.SlotTopicAction != SlotTopicDelete {
		t.Fatalf("reslot 3→1: %+v", res)
	}
	e.checkSlotTopic(-1) // none: the next standalone start creates it with one partition
	e.produce()
	e.runMembers(1, nil, "solo")
	e.checkExactlyOnce()
	e.checkSlotTopic(1)
	if res := e.reslot(1); res.SlotTopicAction != SlotTopicNone {
		t.Fatalf("reslot 1→1 over a standalone job's slot topic: %+v, want the topic left alone", res)
	}
	e.checkSlotTopic(1)
}

// checkSlotTopic asserts the job's slot topic has want partitions (-1:
// none).
func (e *e2eJob) checkSlotTopic(want int) {
	e.t.Helper()
	n, err := slotTopicPartitions(context.Background(), []kgo.Opt{kgo.SeedBrokers(e.kc.ListenAddrs()...)}, coordlog.SlotTopic("rs"))
	if err != nil {
		e.t.Fatal(err)
	}
	if n != want {
		e.t.Fatalf("slot topic %s has %d partitions, want %d", coordlog.SlotTopic("rs"), n, want)
	}
}

// checkOwners asserts, while the members run, that the group view names
// an owner for every one of slots slots among members members (or, when
// rebalancing, says the owner is unknown: a member learns of a rebalance
// at its next heartbeat, so two members may still be in one), and every
// partition's position at its log end (all decided).
func (e *e2eJob) checkOwners(slots, members int, rebalancing bool) {
	e.t.Helper()
	cfg, err := config.Load(config.LoadOptions{File: e.config("viewer", slots), Need: config.NeedJob})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	v, err := jobstate.Open(ctx, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	g := jobstate.ReadGroup(ctx, cfg, v)
	if g.Slots != slots || len(g.Members) != members || len(g.Errors) != 0 {
		e.t.Fatalf("group view while running: %+v", g)
	}
	stable := g.GroupState == "Stable"
	if !stable && !rebalancing {
		e.t.Fatalf("group state %s with one member after its join, want Stable", g.GroupState)
	}
	for _, s := range g.SlotViews {
		if stable && s.Owner == nil || !stable && s.Owner == nil && !strings.HasPrefix(s.OwnerText, jobstate.OwnerRebalancing) {
			e.t.Errorf("slot %d while the members run (group %s): owner %q", s.Slot, g.GroupState, s.OwnerText)
		}
	}
	for _, p := range g.Partitions {
		if p.Lag == nil || *p.Lag != 0 || p.Owner == jobstate.OwnerStopped {
			e.t.Errorf("partition %+v, want lag 0 and an owner", p)
		}
	}
}
