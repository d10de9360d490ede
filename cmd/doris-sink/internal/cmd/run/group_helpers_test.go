package run

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/kafkatest"
)

// memberClientID is the Kafka client ID of member name's membership
// client.
func memberClientID(name string) string { return "member-" + name }

// groupEnv is one group-mode test: a Kafka cluster (short group session
// timeouts allowed), a Doris emulator, a topic of parts partitions and the
// members started on them.
type groupEnv struct {
	t        *testing.T
	kc       *kfake.Cluster
	srv      *doristest.Server
	adm      *kadm.Client
	prod     *kgo.Client
	dir      string
	parts    int32
	slots    int
	produced int
	// extra are YAML lines added to every member's config; listen is the
	// metrics.listen of the members started next ("": none).
	extra  string
	listen string
	// rebalance is kafka.rebalance_timeout ("": 10s); session
	// kafka.session_timeout ("": 1s).
	rebalance, session string
	// slotStarted, if set, is called (without e.mu) when a member's slot
	// job was built, before it runs (review tests: hold a slot job there).
	slotStarted func(m *groupMember, slot, rebuilt int)
	// revoking, if set, is called (without e.mu) when the group revokes
	// slots of a member, before their jobs drain (GroupKnobs.Revoking).
	revoking func(m *groupMember, slots []int)
	// slotStopped, if set, is called (without e.mu) when a member's slot
	// job returned, before the job ends (tests: a job slow to end).
	slotStopped func(m *groupMember, slot int, err error)
	// slotTopicCheck is GroupKnobs.SlotTopicCheck of the members started
	// next (0: the default).
	slotTopicCheck time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every member event
	members []*groupMember
}

// groupMember is one in-process `doris-sink run` of the job.
type groupMember struct {
	name  string
	sigs  chan os.Signal
	tap   *logTap
	done  chan error
	owned map[int]bool // slots owned now (Assigned/Revoked knobs)
	// starts counts slot-job builds (rebuilds included); assigns counts
	// the Assigned callbacks.
	starts, assigns int
	ended           bool
	err             error
	// mayFail: the member is expected to end with an error.
	mayFail bool
	// drained counts, per slot, the slot jobs that ended drained;
	// rebuilt the rebuilds (SlotStarted with rebuilt > 0).
	drained map[int]int
	rebuilt int
	// refused counts, per slot, the slot jobs that ended on a decision
	// refused for the membership (the slot was suspended).
	refused map[int]int
	// kill stops the member like kill -9 (GroupKnobs.Kill).
	kill     chan struct{}
	killOnce sync.Once
}

// killNow stops m at once, as kill -9 would.
func (m *groupMember) killNow() { m.killOnce.Do(func() { close(m.kill) }) }

const groupJob = "grp"

func newGroupEnv(t *testing.T, parts int32, slots int, opts ...kfake.Opt) *groupEnv {
	t.Helper()
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(parts, "orders"),
		kfake.GroupMinSessionTimeout(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	// Kafka's group rule kfake lacks (issue 29): a member waiting in its
	// JoinGroup or SyncGroup is not expired by its session timeout.
	stopKeep, err := kafkatest.KeepParkedMembers(kc, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopKeep)
	srv, _ := cmdutil.NewTestDoris(t, "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &groupEnv{t: t, kc: kc, srv: srv, adm: kadm.NewClient(cl), prod: cl, dir: t.TempDir(), parts: parts, slots: slots,
		changed: make(chan struct{})}
}

// produce appends n records, ids continuing, round-robin over the partitions.
func (e *groupEnv) produce(n int) {
	e.t.Helper()
	var recs []*kgo.Record
	for range n {
		i := e.produced
		recs = append(recs, &kgo.Record{Partition: int32(i) % e.parts, Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
		e.produced++
	}
	if err := e.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// notify wakes the waiters.
func (e *groupEnv) notifyLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// start runs one member; extra YAML lines are added to its config.
func (e *groupEnv) start(name, extra string) *groupMember {
	e.t.Helper()
	return e.startWith(name, "", extra, nil)
}

// startWith is start with the environment env (DORIS_SINK_FAILPOINTS);
// a failpoint crash kills the member (kill -9 at the cut point).
// jobExtra is added inside the job mapping (", instance: x").
func (e *groupEnv) startWith(name, jobExtra, extra string, env []string) *groupMember {
	e.t.Helper()
	path := e.writeConfig(name, jobExtra, extra)
	return e.run(name, path, env)
}

// writeConfig writes member name's config (its job.data_dir is
// <dir>/data-<name>) and returns its path.
func (e *groupEnv) writeConfig(name, jobExtra, extra string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name+".yaml")
	yaml := fmt.Sprintf(`job: { name: %s, data_dir: %s, slots: %d%s }
kafka: { brokers: [%s], topic: orders, session_timeout: %s, rebalance_timeout: %s }
doris: { fe: [%s], mysql: %s, user: root, database: demo, table: t }
delivery: { checkpoint_interval: 500ms, checkpoint_max_rows: 5 }
metrics: { listen: "%s" }
log: { format: json, level: info }
%s%s`, groupJob, filepath.Join(e.dir, "data-"+name), e.slots, jobExtra, strings.Join(e.kc.ListenAddrs(), ", "),
		cmp.Or(e.session, "1s"), cmp.Or(e.rebalance, "10s"), e.srv.FEURL(),
		e.srv.MySQLAddr(), e.listen, e.extra, extra)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if !strings.Contains(jobExtra, "instance:") {
		// The member's default instance id (job.data_dir/instance-id)
		// named after its client ID: kfake's static member IDs are
		// <instance id>-<uuid>, which tests acting on one member's
		// requests match (memberClientID). A restart reads it again.
		data := filepath.Join(e.dir, "data-"+name)
		if err := os.MkdirAll(data, 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, InstanceIDFile), []byte(memberClientID(name)+"\n"), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	return path
}

// run runs member name of the config in path.
func (e *groupEnv) run(name, path string, env []string) *groupMember {
	e.t.Helper()
	m := &groupMember{name: name, sigs: make(chan os.Signal, 2), done: make(chan error, 1), owned: map[int]bool{},
		drained: map[int]int{}, refused: map[int]int{}, kill: make(chan struct{})}
	tap, w := newLogTap()
	m.tap = tap
	knobs := &GroupKnobs{
		// The client ID (and the default instance id, above) names the
		// member in its group member ID, for tests that act on one
		// member's requests.
		KgoOpts: []kgo.Opt{kgo.HeartbeatInterval(50 * time.Millisecond), kgo.ClientID(memberClientID(name))},
		Revoking: func(slots []int) {
			if e.revoking != nil {
				e.revoking(m, slots)
			}
		},
		Kill:           m.kill,
		SlotTopicCheck: e.slotTopicCheck,
		SlotStopped: func(slot int, err error) {
			if e.slotStopped != nil {
				e.slotStopped(m, slot, err)
			}
			e.mu.Lock()
			if err == nil {
				m.drained[slot]++
			}
			if errors.Is(err, kafka.ErrNotOwner) {
				m.refused[slot]++
			}
			e.notifyLocked()
			e.mu.Unlock()
		},
		SlotStarted: func(slot, rebuilt int, _ *Job) {
			if e.slotStarted != nil {
				e.slotStarted(m, slot, rebuilt)
			}
			e.mu.Lock()
			m.starts++
			if rebuilt > 0 {
				m.rebuilt++
			}
			e.notifyLocked()
			e.mu.Unlock()
		},
		Assigned: func(slots []int) {
			e.mu.Lock()
			m.assigns++
			for _, s := range slots {
				m.owned[s] = true
			}
			e.notifyLocked()
			e.mu.Unlock()
		},
		Revoked: func(slots []int) {
			e.mu.Lock()
			for _, s := range slots {
				delete(m.owned, s)
			}
			e.notifyLocked()
			e.mu.Unlock()
		},
	}
	opts := &Options{IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: w},
		Factory: &cmdutil.Factory{Environ: func() []string { return env }}, Signals: m.sigs, groupKnobs: knobs,
		Exit: func(int) { m.killNow() },
		loadConfig: func() (*config.Config, error) {
			return config.Load(config.LoadOptions{File: path, Need: config.NeedRun})
		}}
	opts.Factory.IO = opts.IO
	e.mu.Lock()
	e.members = append(e.members, m)
	e.mu.Unlock()
	e.t.Cleanup(func() {
		// A failed test leaves members running: stop them before the
		// cluster and Doris close.
		m.killNow()
		e.mu.Lock()
		ended := m.ended
		e.mu.Unlock()
		if !ended {
			select {
			case <-m.done:
			case <-time.After(30 * time.Second):
			}
		}
	})
	go func() {
		err := Run(context.Background(), opts)
		w.Close()
		e.mu.Lock()
		m.ended, m.err = true, err
		e.notifyLocked()
		e.mu.Unlock()
		m.done <- err
	}()
	return m
}

// waitUntil waits for cond (called with e.mu held) to hold, on member
// events and log lines.
func (e *groupEnv) waitUntil(what string, cond func() bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		e.mu.Lock()
		ok := cond()
		ch := e.changed
		for _, m := range e.members {
			if m.ended && m.err != nil && !m.mayFail {
				state := e.describeLocked()
				e.mu.Unlock()
				e.t.Fatalf("waiting for %s: member %s ended: %v; members: %s", what, m.name, m.err, state)
			}
		}
		var taps []chan struct{}
		for _, m := range e.members {
			m.tap.mu.Lock()
			taps = append(taps, m.tap.changed)
			m.tap.mu.Unlock()
		}
		e.mu.Unlock()
		if ok {
			return
		}
		// Wake on a member event or on any member's next log line.
		wake := make(chan struct{})
		stop := make(chan struct{})
		for _, tc := range taps {
			go func() {
				select {
				case <-tc:
					select {
					case wake <- struct{}{}:
					case <-stop:
					}
				case <-stop:
				}
			}()
		}
		select {
		case <-ch:
		case <-wake:
		case <-ctx.Done():
			close(stop)
			e.mu.Lock()
			state := e.describeLocked()
			e.dumpLogsLocked()
			ends, per := e.decidedLocked()
			fmt.Fprintf(os.Stderr, "%s: timed out waiting for %s; decided ends %v per member %v; members: %s\n", e.t.Name(), what, ends, per, state)
			e.mu.Unlock()
			e.t.Fatalf("timed out waiting for %s; members: %s", what, state)
		}
		close(stop)
	}
}

// dumpLogsLocked writes the members' warnings and errors to stderr at once
// (a hung cleanup would hide t.Log output).
func (e *groupEnv) dumpLogsLocked() {
	for _, m := range e.members {
		m.tap.mu.Lock()
		for _, l := range m.tap.lines {
			if l["level"] != "INFO" || strings.HasPrefix(fmt.Sprint(l["msg"]), "group mode") {
				fmt.Fprintf(os.Stderr, "%s %s: %v\n", e.t.Name(), m.name, l)
			}
		}
		m.tap.mu.Unlock()
	}
}

func (e *groupEnv) describeLocked() string {
	var b strings.Builder
	for _, m := range e.members {
		fmt.Fprintf(&b, "[%s owned %v starts %d ended %v err %v] ", m.name, m.ownedLocked(), m.starts, m.ended, m.err)
	}
	return b.String()
}

// ownedLocked returns the member's slots, sorted (e.mu held).
func (m *groupMember) ownedLocked() []int {
	var out []int
	for s := range m.owned {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// ownership waits until the members own, in order, the given numbers of
// slots (each slot once).
func (e *groupEnv) ownership(counts map[*groupMember]int) {
	e.t.Helper()
	e.waitUntil(fmt.Sprintf("slot counts %v", countsOf(counts)), func() bool {
		total := map[int]int{}
		for m, n := range counts {
			if len(m.owned) != n {
				return false
			}
			for s := range m.owned {
				total[s]++
			}
		}
		for _, n := range total {
			if n != 1 {
				return false
			}
		}
		return true
	})
}

func countsOf(counts map[*groupMember]int) map[string]int {
	out := map[string]int{}
	for m, n := range counts {
		out[m.name] = n
	}
	return out
}

// decided returns, over every member's "checkpoint decided" lines, the
// highest end offset of each partition, and the number of lines per
// member (e.mu held).
func (e *groupEnv) decidedLocked() (map[int32]int64, map[string]int) {
	ends, per := map[int32]int64{}, map[string]int{}
	for _, m := range e.members {
		m.tap.mu.Lock()
		for _, l := range m.tap.lines {
			if l["msg"] != "checkpoint decided" {
				continue
			}
			b, _ := json.Marshal(l["end"])
			pos, ok, err := kafka.ParsePosition(b)
			if err != nil || !ok {
				continue
			}
			per[m.name]++
			for p, o := range pos.Of("orders") {
				ends[p] = max(ends[p], o)
			}
		}
		m.tap.mu.Unlock()
	}
	return ends, per
}

// waitAllDecided waits until every produced record is in a decided
// checkpoint of some member.
func (e *groupEnv) waitAllDecided() {
	e.t.Helper()
	want := map[int32]int64{}
	for i := 0; i < e.produced; i++ {
		want[int32(i)%e.parts]++
	}
	e.waitUntil(fmt.Sprintf("every partition decided up to %v", want), func() bool {
		ends, _ := e.decidedLocked()
		for p, o := range want {
			if ends[p] < o {
				return false
			}
		}
		return true
	})
}

// stop sends SIGTERM to m and returns Run's result.
func (e *groupEnv) stop(m *groupMember) error {
	e.t.Helper()
	m.sigs <- syscall.SIGTERM
	select {
	case err := <-m.done:
		return err
	case <-time.After(90 * time.Second):
		e.t.Fatalf("member %s did not end after SIGTERM", m.name)
		return nil
	}
}

// checkExactlyOnce asserts that ids [0, produced) are loaded once each.
func (e *groupEnv) checkExactlyOnce() {
	e.t.Helper()
	rows, err := e.srv.Rows("demo", "t")
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	var bad []string
	for i := int64(0); i < int64(e.produced); i++ {
		if seen[i] != 1 {
			bad = append(bad, fmt.Sprintf("id %d ×%d", i, seen[i]))
		}
	}
	if len(bad) > 0 || len(rows) != e.produced {
		e.t.Fatalf("%d rows for %d records; not exactly once: %v", len(rows), e.produced, bad)
	}
}
