package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	cp "github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// rebaseEnv is one test's Kafka (2 partitions of "orders"), Doris and a
// `run` job of either coordinator.
type rebaseEnv struct {
	t     *testing.T
	kafka *kfake.Cluster
	doris *doristest.Server
	adm   *kadm.Client
	prod  *kgo.Client
	coord string
	dir   string
	// ids[p] are the ids produced to partition p, in offset order.
	ids  [2][]int64
	next int64
	logs lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newRebaseEnv(t *testing.T, coord string) *rebaseEnv {
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
	return &rebaseEnv{t: t, kafka: kc, doris: srv, adm: kadm.NewClient(cl), prod: cl, coord: coord,
		dir: filepath.Join(t.TempDir(), "data")}
}

// produce appends n records per partition.
func (e *rebaseEnv) produce(n int) {
	e.t.Helper()
	var recs []*kgo.Record
	for range n {
		for p := range int32(2) {
			id := e.next
			e.next++
			e.ids[p] = append(e.ids[p], id)
			recs = append(recs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, id, id)})
		}
	}
	if err := e.prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// recreate deletes and recreates the topic (empty, 2 partitions).
func (e *rebaseEnv) recreate() {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.adm.DeleteTopic(ctx, "orders"); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		e.t.Fatal(err)
	}
	e.prod.PurgeTopicsFromClient("orders")
	e.ids = [2][]int64{}
}

func (e *rebaseEnv) config() *config.Config {
	e.t.Helper()
	cfg, err := config.Load(config.LoadOptions{File: e.configFile(), Need: config.NeedRun})
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// configFile writes the job's config file and returns its path.
func (e *rebaseEnv) configFile() string {
	e.t.Helper()
	yaml := fmt.Sprintf(`job: {name: rb-job, data_dir: %s, coordinator: %s}
kafka: {brokers: [%s], topic: orders, start: earliest}
doris: {fe: [%s], mysql: %s, user: root, database: db, table: t}
delivery: {checkpoint_interval: 30m, checkpoint_max_rows: 4}
metrics: {listen: ""}
`, e.dir, e.coord, e.kafka.ListenAddrs()[0], e.doris.FEURL(), e.doris.MySQLAddr())
	path := filepath.Join(e.t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// build builds the job; drainAt (when not nil) drains it once it read up to
// those offsets.
func (e *rebaseEnv) build(drainAt map[int32]int64) (*run.Job, error) {
	e.t.Helper()
	return e.buildFP(drainAt, nil)
}

// buildFP is build with loader failpoints.
func (e *rebaseEnv) buildFP(drainAt map[int32]int64, fps *loader.Failpoints) (*run.Job, error) {
	e.t.Helper()
	cfg := e.config()
	log, err := run.NewLogger(config.Log{Level: "info"}, &e.logs)
	if err != nil {
		e.t.Fatal(err)
	}
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { client.Close() })
	var job *run.Job
	opts := []kafka.Opt{kafka.WithRecoverBackoff(0, 0)}
	if drainAt != nil {
		opts = append(opts, kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterPoll: func(p kafka.Position) {
			for part, o := range drainAt {
				if p.Offsets[part] < o {
					return
				}
			}
			job.Connector.Drain()
		}}))
	}
	job, err = run.Build(cfg, run.Deps{Doris: client, Logger: log, FenceCheckInterval: time.Millisecond, ConnectorOpts: opts,
		Failpoints: fps})
	return job, err
}

// runTo runs the job until it read up to the current log ends.
func (e *rebaseEnv) runTo() {
	e.t.Helper()
	job, err := e.build(map[int32]int64{0: e.end(0), 1: e.end(1)})
	if err != nil {
		e.t.Fatalf("build: %v\nlogs:\n%s", err, e.logs.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := job.Connector.Run(ctx); err != nil {
		e.t.Fatalf("run: %v\nlogs:\n%s", err, e.logs.String())
	}
}

func (e *rebaseEnv) end(p int32) int64 {
	e.t.Helper()
	lo, err := e.adm.ListEndOffsets(context.Background(), "orders")
	if err != nil {
		e.t.Fatal(err)
	}
	o, _ := lo.Lookup("orders", p)
	return o.Offset
}

// checkRows asserts the table holds exactly want, once each.
func (e *rebaseEnv) checkRows(want []int64) {
	e.t.Helper()
	rows, err := e.doris.Rows("db", "t")
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for _, id := range want {
		if seen[id] != 1 {
			e.t.Errorf("id %d loaded %d times, want once", id, seen[id])
		}
	}
	if len(rows) != len(want) {
		e.t.Errorf("%d rows, want %d: %v", len(rows), len(want), seen)
	}
}

// rebaseLedger returns the ledger entries of operator rebases.
func (e *rebaseEnv) rebaseLedger() []ledger.Entry {
	e.t.Helper()
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []ledger.Entry
	for _, en := range entries {
		if strings.Contains(en.Note, "operator rebase") {
			out = append(out, en)
		}
	}
	return out
}

// Issue 12, positions you can trust: records behind a stored offset's log
// start were deleted (retention, DeleteRecords). The start stops, naming
// the topic-partition, the stored offset, the log range and the rebase
// command; a dry run changes nothing; the rebase to earliest is recorded
// (state and ledger) and the job then loads exactly the records still in
// the log. Both coordinators.
func TestRebaseBehindLogStart(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newRebaseEnv(t, coord)
			e.produce(4)
			e.runTo()
			want := append(append([]int64{}, e.ids[0]...), e.ids[1]...)
			e.produce(6) // partitions at 10; the job stored 4
			// Retention removes offsets 4..7 of partition 0 before the job reads them.
			if _, err := e.adm.DeleteRecords(context.Background(), kadm.Offsets{"orders": {0: {At: 8}}}); err != nil {
				t.Fatal(err)
			}
			_, err := e.build(nil)
			var oor *run.PositionOutOfRangeError
			if !errors.As(err, &oor) || len(oor.Partitions) != 1 || oor.Partitions[0].Partition != 0 ||
				oor.Partitions[0].Stored != 4 || oor.Partitions[0].LogStart != 8 || oor.Partitions[0].LogEnd != 10 {
				t.Fatalf("start behind the log start: %v, want a *run.PositionOutOfRangeError for orders/0 at 4 (log 8..10)", err)
			}
			for _, w := range []string{"orders/0", "4 is behind the log start 8", "records 4..7", "checkpoint rebase", "nothing was loaded"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal lacks %q: %v", w, err)
				}
			}
			cfg := e.config()
			// --to earliest moves only the partition outside the log; with
			// --all-partitions partition 1 would re-read from 0.
			dry, err := Rebase(context.Background(), cfg, RebaseRequest{To: RebaseEarliest, DryRun: true})
			if err != nil || !dry.DryRun || len(dry.Partitions) != 2 || dry.Partitions[0].To != 8 || *dry.Partitions[0].From != 4 ||
				dry.Partitions[1].To != 4 {
				t.Fatalf("dry run: %+v %v", dry, err)
			}
			all, err := Rebase(context.Background(), cfg, RebaseRequest{To: RebaseEarliest, DryRun: true, AllPartitions: true})
			if err != nil || all.Partitions[1].To != 0 {
				t.Fatalf("dry run --all-partitions: %+v %v", all, err)
			}
			if _, err := e.build(nil); !errors.As(err, &oor) {
				t.Fatalf("the dry run changed the state: start %v", err)
			}
			// Partition 1 keeps its stored offset; partition 0 from its new log start.
			res, err := Rebase(context.Background(), cfg, RebaseRequest{Offsets: map[int32]int64{0: 8}, By: "op@test"})
			if err != nil || res.DryRun || res.To != RebaseOffsets || string(res.Target) != `{"topic":"orders","offsets":{"0":8,"1":4}}` {
				t.Fatalf("rebase: %+v %v", res, err)
			}
			if lg := e.rebaseLedger(); len(lg) != 1 || lg[0].Checkpoint != res.Checkpoint || lg[0].Event != ledger.EventCommitted ||
				!strings.Contains(lg[0].Note, "op@test") || !strings.Contains(lg[0].Note, "0: 4→8 skips 4 offsets") {
				t.Errorf("ledger rebase entries %+v", lg)
			}
			e.runTo()
			want = append(want, e.ids[0][8:]...)
			want = append(want, e.ids[1][4:]...)
			e.checkRows(want)
			if st := readState(t, e); st.Decided.ID <= res.Checkpoint || st.History[len(st.History)-1].ID < res.Checkpoint {
				t.Errorf("state after the rebase and a run: decided %d, want after the rebase's checkpoint %d", st.Decided.ID, res.Checkpoint)
			}
		})
	}
}

// readState reads the job's state read-only.
func readState(t *testing.T, e *rebaseEnv) *cp.State {
	t.Helper()
	if e.coord == config.CoordinatorFile {
		st, err := cp.ReadFile(e.dir)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	sn, err := coordlog.ReadSnapshot(context.Background(), "rb-job", []kgo.Opt{kgo.SeedBrokers(e.kafka.ListenAddrs()...)})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _, err := sn.StateOf("")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A stored offset beyond the log end (the topic was recreated under the
// file coordinator, which has no topic ID to tell) stops the start; the
// Kafka coordinator's recreated-topic refusal names the rebase command.
// After `rebase --to earliest` each job loads the new topic exactly once.
func TestRebaseRecreatedTopic(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newRebaseEnv(t, coord)
			e.produce(5)
			e.runTo()
			old := append(append([]int64{}, e.ids[0]...), e.ids[1]...)
			e.recreate()
			e.produce(2)
			_, err := e.build(nil)
			var oor *run.PositionOutOfRangeError
			var rec *coordlog.TopicRecreatedError
			switch coord {
			case config.CoordinatorFile:
				if !errors.As(err, &oor) || len(oor.Partitions) != 2 || oor.Partitions[0].Stored != 5 || oor.Partitions[0].LogEnd != 2 ||
					!strings.Contains(err.Error(), "beyond the log end 2") {
					t.Fatalf("file job on a recreated topic: %v, want a *run.PositionOutOfRangeError (5 beyond the log end 2)", err)
				}
			default:
				if !errors.As(err, &rec) {
					t.Fatalf("kafka job on a recreated topic: %v, want a *coordlog.TopicRecreatedError", err)
				}
			}
			if !strings.Contains(err.Error(), "checkpoint rebase -c <job config> --to earliest") {
				t.Errorf("refusal does not name the rebase command: %v", err)
			}
			if _, err := Rebase(context.Background(), e.config(), RebaseRequest{To: RebaseEarliest}); err != nil {
				t.Fatalf("rebase: %v", err)
			}
			e.runTo()
			e.checkRows(append(old, append(e.ids[0], e.ids[1]...)...))
		})
	}
}

// The rebase needs the job stopped: a running file job holds the store's
// lock (refused, nothing changed); a running Kafka job is fenced by the
// rebase's InitProducerID and stops with ErrFenced, deciding nothing more.
func TestRebaseRefusesOrFencesLiveJob(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newRebaseEnv(t, coord)
			e.produce(4)
			e.runTo()
			job, err := e.build(nil) // runs until stopped
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- job.Connector.Run(ctx) }()
			before := readState(t, e)
			// Every offset is inside the log: refused before the store is
			// opened (a refusal never fences the job).
			var re *RebaseRefusedError
			if _, err := Rebase(ctx, e.config(), RebaseRequest{To: RebaseLatest}); !errors.As(err, &re) ||
				!strings.Contains(err.Error(), "nothing to rebase") {
				t.Fatalf("rebase with every offset in the log: %v, want a refusal", err)
			}
			_, err = Rebase(ctx, e.config(), RebaseRequest{To: RebaseLatest, AllPartitions: true})
			if coord == config.CoordinatorFile {
				var le *cp.LockedError
				if !errors.As(err, &le) || !strings.Contains(err.Error(), "stop the job first") {
					t.Fatalf("rebase of a running file job: %v, want *checkpoint.LockedError", err)
				}
				if after := readState(t, e); after.NextID != before.NextID {
					t.Errorf("a refused rebase changed the store: next id %d → %d", before.NextID, after.NextID)
				}
				job.Connector.Drain()
				if err := <-done; err != nil {
					t.Fatalf("run: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("rebase of a running kafka job: %v", err)
			}
			if err := <-done; !errors.Is(err, cp.ErrFenced) {
				t.Fatalf("the running job after a rebase: %v, want ErrFenced", err)
			}
		})
	}
}

// Flags: exactly one of --to and --offsets, and well-formed offsets.
func TestRebaseFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--to", "earliest"},
		{"-c", "x", "--to", "middle"},
		{"-c", "x"},
		{"-c", "x", "--to", "earliest", "--offsets", "0=1"},
		{"-c", "x", "--offsets", "0=a"},
		{"-c", "x", "--offsets", "0=1,0=2"},
	} {
		f, _, _ := cmdutil.NewTestFactory(false)
		cmd := NewCmdRebase(f, func(context.Context, *RebaseOptions) error { return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil {
			t.Errorf("rebase %v accepted", args)
		}
	}
	if m, err := ParseOffsets("0=120, 1=0"); err != nil || m[0] != 120 || m[1] != 0 || len(m) != 2 {
		t.Errorf("ParseOffsets = %v %v", m, err)
	}
}

// A decided checkpoint not committed yet blocks a rebase (its rows are
// promised to Doris): with the topic recreated the job cannot start to
// commit it. The rebase asks Doris: PRECOMMITTED is refused, naming `txn
// commit` of the decided txn; once that commit made it VISIBLE the rebase
// marks it committed and moves on, and every record is loaded once.
func TestRebaseSettlesDecidedCheckpoint(t *testing.T) {
	t.Parallel()
	e := newRebaseEnv(t, config.CoordinatorKafka)
	e.produce(6)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	job, err := e.buildFP(nil, fps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := job.Connector.Run(ctx); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("run: %v, want a crash after decide", err)
	}
	d := readState(t, e).Decided
	if d == nil || d.Committed {
		t.Fatalf("decided %+v, want one not committed", d)
	}
	e.recreate()
	e.produce(2)
	cfg := e.config()
	client, err := cmdutil.NewDorisClient(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	_, err = Rebase(ctx, cfg, RebaseRequest{To: RebaseEarliest, Doris: client})
	var re *RebaseRefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "PRECOMMITTED") || !strings.Contains(err.Error(), fmt.Sprintf("txn commit %d", d.TxnID)) {
		t.Fatalf("rebase over a PRECOMMITTED decision: %v, want a refusal naming txn commit %d", err, d.TxnID)
	}
	if err := client.CommitTxn(ctx, "db", d.TxnID); err != nil {
		t.Fatal(err)
	}
	if st := e.doris.LabelState("db", d.Label); st != doris.TxnVisible && st != doris.TxnCommitted {
		t.Fatalf("label %s is %s after the commit", d.Label, st)
	}
	if _, err := Rebase(ctx, cfg, RebaseRequest{To: RebaseEarliest, Doris: client}); err != nil {
		t.Fatalf("rebase after the commit: %v", err)
	}
	st := readState(t, e)
	if h := st.History[len(st.History)-1]; h.ID != d.ID || !h.Committed {
		t.Errorf("the decided checkpoint in history: %+v, want it marked committed", h)
	}
	e.runTo()
	rows, err := e.doris.Rows("db", "t")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r[0].(int64)]++
	}
	for _, id := range append(e.ids[0], e.ids[1]...) {
		if seen[id] != 1 {
			t.Errorf("new topic's id %d loaded %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("id %d loaded %d times", id, n)
		}
	}
}

// The command as an operator runs it: --dry-run -o json prints the plan and
// changes nothing; without --yes off a terminal it is not confirmed; with
// --yes it warns that a running process is fenced and prints the move.
func TestRebaseCommand(t *testing.T) {
	t.Parallel()
	e := newRebaseEnv(t, config.CoordinatorKafka)
	e.produce(4)
	e.runTo()
	e.produce(2)
	if _, err := e.adm.DeleteRecords(context.Background(), kadm.Offsets{"orders": {1: {At: 5}}}); err != nil {
		t.Fatal(err)
	}
	path := e.configFile()
	exec := func(args ...string) (string, string, error) {
		f, out, errOut := cmdutil.NewTestFactory(false)
		cmd := NewCmdRebase(f, nil)
		cmd.SetArgs(append([]string{"-c", path}, args...))
		cmd.SetOut(out)
		cmd.SetErr(errOut)
		cmd.SetContext(context.Background())
		err := cmd.Execute()
		return out.String(), errOut.String(), err
	}
	before := readState(t, e)
	out, _, err := exec("--to", "latest", "--dry-run", "-o", "json")
	var r RebaseResult
	if err == nil {
		err = json.Unmarshal([]byte(out), &r)
	}
	var target bytes.Buffer
	if err == nil {
		err = json.Compact(&target, r.Target)
	}
	if err != nil || !r.DryRun || r.To != RebaseLatest || target.String() != `{"topic":"orders","offsets":{"0":4,"1":6}}` ||
		r.Coordinator != "kafka" || r.Checkpoint != before.NextID {
		t.Fatalf("dry run: %v %+v", err, r)
	}
	var nc *cmdutil.NotConfirmedError
	if _, _, err := exec("--to", "latest"); !errors.As(err, &nc) {
		t.Fatalf("without --yes off a terminal: %v, want *cmdutil.NotConfirmedError", err)
	}
	if after := readState(t, e); after.NextID != before.NextID {
		t.Fatalf("dry run or unconfirmed run changed the state: next id %d → %d", before.NextID, after.NextID)
	}
	out, errOut, err := exec("--to", "latest", "--yes")
	if err != nil || !strings.HasPrefix(out, "Rebased job rb-job (kafka) to {\"topic\":\"orders\",\"offsets\":{\"0\":4,\"1\":6}}") ||
		!strings.Contains(errOut, "fenced") {
		t.Fatalf("rebase --yes: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	if d := readState(t, e).Decided; d.ID != before.NextID || !d.Empty || !d.Committed {
		t.Errorf("decided after the rebase: %+v, want the operator's empty committed checkpoint %d", d, before.NextID)
	}
}

// With job.coordinator kafka every copy of a job is a member of its
// consumer group (owner and standbys): a rebase names the live members and
// asks for every copy to be stopped first (the writing one is fenced and
// stops; a standby left running takes over on the rebased state). No
// member: no warning.
func TestRebaseWarnsOfLiveMembers(t *testing.T) {
	t.Parallel()
	e := newRebaseEnv(t, config.CoordinatorKafka)
	e.produce(4)
	e.runTo()
	cfg := e.config()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	warned := func() string {
		ios, _, errOut := cmdutil.TestStreams("", false)
		warnLiveMembers(ctx, &RebaseOptions{IO: ios}, cfg)
		return errOut.String()
	}
	if w := warned(); w != "" {
		t.Fatalf("no member running: %q, want no warning", w)
	}
	standby, err := kgo.NewClient(kgo.SeedBrokers(e.kafka.ListenAddrs()...), kgo.ConsumerGroup(cfg.Kafka.Group),
		kgo.ConsumeTopics("orders"), kgo.InstanceID("standby-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// A static member's Close waits for the group's management
		// goroutine; bound it so a slow kfake rebalance cannot hang the test.
		closed := make(chan struct{})
		go func() { standby.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			t.Log("the standby's client did not close within 30 s; left behind")
		}
	}()
	for {
		if _, gen := standby.GroupMetadata(); gen > 0 {
			break
		}
		pctx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
		standby.PollFetches(pctx)
		stop()
		if ctx.Err() != nil {
			t.Fatal("the member never joined the group")
		}
	}
	if w := warned(); !strings.Contains(w, "live members") || !strings.Contains(w, "standby-1") ||
		!strings.Contains(w, "standbys too") {
		t.Fatalf("a member running: %q, want a warning naming it and asking to stop every copy", w)
	}
}
