package coordlog

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// dlEnv is what survives a crash of a job with job.coordinator kafka and a
// dead-letter topic: Kafka (source, dead-letter and state topics), Doris
// and the ledger directory.
type dlEnv struct {
	t      *testing.T
	kc     *kfake.Cluster
	srv    *doristest.Server
	client *doris.Client
	dir    string
	// maxRows is the processes' checkpoint row cap (default 4).
	maxRows int64
	// refused are the indexes produce makes rows Doris refuses.
	refused map[int]bool
	// bisectMax is the processes' Config.BisectMaxFailures (0: default).
	bisectMax int
	// props are the processes' Stream Load properties.
	props map[string]string
	// drainTo, when set, is where the processes drain (per partition),
	// instead of partition 0 at drainAt.
	drainTo map[int32]int64
	// topics, when it holds several, are the source topics (kafka.topics;
	// nil: orders alone); partition 0 of each gets the same records, ids
	// offset by 1000 per topic (topicID).
	topics []string
}

// sourceTopics returns the env's source topics.
func (e *dlEnv) sourceTopics() []string {
	if len(e.topics) == 0 {
		return []string{"orders"}
	}
	return e.topics
}

// rowID is the Doris id of record i of the k-th source topic.
func rowID(k, i int) int { return 1000*k + i }

// badValue is the value of bad record i of the k-th source topic.
func badValue(topic string, k, i int) string {
	if k == 0 {
		return fmt.Sprintf("bad record %d", i)
	}
	return fmt.Sprintf("bad record %s %d", topic, i)
}

const dlTopic = "orders-dlq"

func newDLEnv(t *testing.T, opts ...kfake.Opt) *dlEnv {
	t.Helper()
	kc := newCluster(t, append([]kfake.Opt{kfake.SeedTopics(1, dlTopic)}, opts...)...)
	srv, err := doristest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateDatabase("db"); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateTable("db", "CREATE TABLE t (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root",
		MaxRetries: -1, RequestTimeout: 10 * time.Second, LoadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &dlEnv{t: t, kc: kc, srv: srv, client: client, dir: t.TempDir(), maxRows: 4}
}

// produce writes n records to partition 0 of each source topic: every one
// whose index is in bad is not JSON (a dead letter), the others are rows
// with id = rowID(topic's index, index). It returns the bad values.
func (e *dlEnv) produce(n int, bad map[int]bool) []string {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	var bads []string
	for k, topic := range e.sourceTopics() {
		for i := range n {
			id := rowID(k, i)
			v := fmt.Sprintf(`{"id":%d,"v":"v%d"}`, id, i)
			if e.refused[i] {
				// Longer than VARCHAR(32): Doris filters it (no pre-check here).
				v = fmt.Sprintf(`{"id":%d,"v":"%0100d"}`, id, i)
				bads = append(bads, v)
			}
			if bad[i] {
				v = badValue(topic, k, i)
				bads = append(bads, v)
			}
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(v)})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	return bads
}

// process is one "doris-sink run" of the job: a Store (fencing the
// previous one), a loader and a connector that stages its dead letters on
// the Store. It drains once it consumed offsets [0, drainAt) of partition
// 0; failpoint (nil: none) is the Store's Config.Failpoint.
type process struct {
	store *Store
	conn  *kafka.Connector
}

func (e *dlEnv) process(drainAt int64, fps *loader.Failpoints, failpoint func(string) error, opts ...kafka.Opt) *process {
	e.t.Helper()
	cfg := storeConfig(e.kc, "dl")
	cfg.Owner.DB, cfg.Owner.Table = "db", "t"
	cfg.Log.Failpoint = failpoint
	if len(e.topics) > 1 {
		cfg.Topic, cfg.Topics, cfg.Owner.Source = "", e.topics, "kafka"
		for _, topic := range e.topics {
			cfg.PreviousSources = append(cfg.PreviousSources, "kafka:"+topic)
		}
	}
	st, err := OpenStore(ctxT(e.t), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ld, err := loader.New(e.client, loader.Config{Job: "dl", DB: "db", Table: "t", Source: cfg.Owner.Source,
		Format: kafka.LoaderFormat(kafka.FormatJSON), Properties: e.props, Store: st, LedgerDir: e.dir, Failpoints: fps,
		Retry: loader.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxElapsed: 5 * time.Second}})
	if err != nil {
		st.Close()
		e.t.Fatal(err)
	}
	p := &process{store: st}
	var once sync.Once
	knobs := &kafka.TestingKnobs{AfterPoll: func(pos kafka.Position) {
		to := e.drainTo
		if to == nil {
			to = map[int32]int64{0: drainAt}
		}
		for _, topic := range e.sourceTopics() {
			for part, o := range to {
				if pos.Of(topic)[part] < o {
					return
				}
			}
		}
		once.Do(p.conn.Drain)
	}}
	kcfg := kafka.Config{Brokers: e.kc.ListenAddrs(), Topic: cfg.Topic, Topics: cfg.Topics, Group: "g-dl",
		Format: kafka.FormatJSON, CheckpointInterval: time.Hour, CheckpointMaxRows: e.maxRows, PartitionRefresh: -1,
		DeadLetterTopic: dlTopic, BisectMaxFailures: e.bisectMax}
	p.conn, err = kafka.New(kcfg, ld, append([]kafka.Opt{kafka.WithRecoverBackoff(0, 0), kafka.WithStartStore(st),
		kafka.WithDeadLetterStager(st), kafka.WithTestingKnobs(knobs),
		kafka.WithKgoOpts(kgo.FetchMaxWait(20 * time.Millisecond))}, opts...)...)
	if err != nil {
		ld.Close(context.Background())
		e.t.Fatal(err)
	}
	return p
}

// dlqValues reads the whole dead-letter topic with read_committed (up to a
// sentinel it appends first): how often each value is visible.
func (e *dlEnv) dlqValues() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, r := range e.dlqRecords() {
		out[string(r.Value)]++
	}
	return out
}

// dlqRecords reads the whole dead-letter topic with read_committed (up to
// a sentinel it appends first).
func (e *dlEnv) dlqRecords() []*kgo.Record {
	e.t.Helper()
	ctx := ctxT(e.t)
	pr, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic(dlTopic))
	if err != nil {
		e.t.Fatal(err)
	}
	defer pr.Close()
	if err := pr.ProduceSync(ctx, &kgo.Record{Value: []byte("sentinel")}).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.ConsumeTopics(dlTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			e.t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "sentinel" {
				done = true
				return
			}
			out = append(out, r)
		})
	}
	return out
}

// ledgerDeadLettered sums dead_lettered over the ledger's committed
// entries (one per checkpoint that reached Doris or was empty).
func (e *dlEnv) ledgerDeadLettered() int64 {
	e.t.Helper()
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	for _, en := range entries {
		if en.Event == ledger.EventCommitted {
			n += en.DeadLettered
		}
	}
	return n
}

// checkExactlyOnce asserts that Doris holds ids [0, n) minus bad once
// each (of every source topic, rowID), the dead-letter topic (read_committed) every bad value once, and
// the ledger counts as many dead letters.
func (e *dlEnv) checkExactlyOnce(n int, bad map[int]bool, bads []string) {
	e.t.Helper()
	rows, err := e.srv.Rows("db", "t")
	if err != nil {
		e.t.Fatal(err)
	}
	got := map[int64]int{}
	for _, r := range rows {
		got[r[0].(int64)]++
	}
	topics := e.sourceTopics()
	for k := range topics {
		for i := range n {
			want := 1
			if bad[i] {
				want = 0
			}
			if id := int64(rowID(k, i)); got[id] != want {
				e.t.Errorf("id %d (%s offset %d) loaded %d times, want %d", id, topics[k], i, got[id], want)
			}
		}
	}
	if len(rows) != n*len(topics)-len(bads) {
		e.t.Errorf("%d rows loaded, want %d", len(rows), n*len(topics)-len(bads))
	}
	dl := e.dlqValues()
	for _, b := range bads {
		if dl[b] != 1 {
			e.t.Errorf("dead-letter topic (read_committed) holds %q %d times, want once", b, dl[b])
		}
		delete(dl, b)
	}
	if len(dl) > 0 {
		e.t.Errorf("dead-letter topic holds unexpected records %v", dl)
	}
	if got := e.ledgerDeadLettered(); got != int64(len(bads)) {
		e.t.Errorf("ledger counts %d dead letters in committed entries, want %d", got, len(bads))
	}
}

var testBad = map[int]bool{1: true, 5: true, 6: true, 11: true}

// Issue 11: dead letters were produced as they were read, so every rewind
// produced them again (20 dead letters for 5 bad records after 3
// precommit failures). Staged on the Store, they are produced in the
// transaction that decides their checkpoint: failed precommits (each
// followed by a rewind and a re-read) leave each bad record once in the
// dead-letter topic, and the ledger counts each once.
func TestDeadLettersExactlyOnceAcrossRewinds(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	bads := e.produce(14, testBad)
	fps := loader.NewFailpoints()
	// Three failed precommits: of the first checkpoint, and twice later.
	if _, err := fps.Arm(loader.FailAfterPrecommit, loader.ReturnError(nil).Times(3)); err != nil {
		t.Fatal(err)
	}
	p := e.process(14, fps, nil)
	if err := p.conn.Run(ctxT(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := fps.Hits(loader.FailAfterPrecommit); got < 4 {
		t.Fatalf("after-precommit passed %d times, want the 3 failures and more", got)
	}
	e.checkExactlyOnce(14, testBad, bads)
}

// A crash at each failpoint of the decision's transaction with dead
// letters (FailDeadLettersProduced: produced, not committed;
// FailDeadLettersCommitted: committed, the loader not told), then a new
// process: every good record is loaded once, every bad one is in the
// dead-letter topic once (read_committed), and the ledger counts it once.
func TestDeadLettersExactlyOnceAcrossCrashes(t *testing.T) {
	t.Parallel()
	for _, fp := range AllFailpoints {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			e := newDLEnv(t)
			bads := e.produce(14, testBad)
			ctx, kill := context.WithCancel(ctxT(t))
			defer kill()
			crashes := 0
			errKilled := errors.New("killed")
			p := e.process(14, nil, func(name string) error {
				if name != fp || crashes > 0 {
					return nil
				}
				crashes++
				kill() // the process dies here
				return errKilled
			})
			if err := p.conn.Run(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v, want it killed at %s", err, fp)
			}
			if crashes != 1 {
				t.Fatalf("failpoint %s hit %d times, want 1", fp, crashes)
			}
			q := e.process(14, nil, nil)
			if err := q.conn.Run(ctxT(t)); err != nil {
				t.Fatalf("second run: %v", err)
			}
			e.checkExactlyOnce(14, testBad, bads)
		})
	}
}

// A decided checkpoint with dead letters whose Doris txn is then aborted
// ("timeout by txn manager") is healed by the next process: it replays the
// checkpoint's range and decides it again under the same id. The dead
// letters went out with the first decision: the heal's decision must not
// produce them again.
func TestDeadLettersNotRepeatedByAHeal(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	bads := e.produce(14, testBad)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	p := e.process(14, fps, nil)
	if err := p.conn.Run(ctxT(t)); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("first run: %v, want a crash after the first decision", err)
	}
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("aborted %d precommitted txns, want the decided one", n)
	}
	var healed []uint64
	q := e.process(14, nil, nil)
	if err := q.conn.Run(ctxT(t)); err != nil {
		t.Fatalf("second run: %v", err)
	}
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.Event == ledger.EventHealed {
			healed = append(healed, en.Checkpoint)
		}
	}
	if len(healed) != 1 {
		t.Fatalf("ledger healed entries %v, want one", healed)
	}
	e.checkExactlyOnce(14, testBad, bads)
}

// Issue 11: a row Doris refuses (here: longer than VARCHAR(32), with no
// pre-check) failed the checkpoint forever. With a dead-letter topic the
// refused range is bisected: re-read in checkpoints half as large after
// each refusal until a one-row checkpoint is refused; that record is
// dead-lettered (reason "rejected", exactly once, with the decision that
// skips it) and every other record loads exactly once. The refused loads
// stay within about log2(rows) per refused row.
func TestRowsDorisRefusesAreBisectedAndDeadLettered(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.maxRows = 32
	e.refused = map[int]bool{7: true, 23: true, 24: true}
	const n = 70
	bads := e.produce(n, map[int]bool{40: true})
	p := e.process(n, nil, nil)
	if err := p.conn.Run(ctxT(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	bad := map[int]bool{7: true, 23: true, 24: true, 40: true}
	e.checkExactlyOnce(n, bad, bads)
	failures := p.conn.Metrics().CheckpointFailures.Load()
	// Each refused row costs about log2(32) + 1 = 6 refused loads.
	if failures < 3 || failures > 3*6+2 {
		t.Fatalf("%d refused loads for 3 refused rows in checkpoints of 32, want 3 to %d", failures, 3*6+2)
	}
	if got := p.conn.Metrics().DeadLetteredByReason()[kafka.ReasonRejected]; got < 3 {
		t.Fatalf("dead letters of reason rejected: %d, want at least the 3 rows", got)
	}
	rejected := 0
	for _, r := range e.dlqRecords() {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		if h[kafka.HeaderReason] != string(kafka.ReasonRejected) {
			continue
		}
		rejected++
		// The emulator sends no FirstErrorMsg, so no column is named here
		// (dorisColumn reads it from Doris's message when there is one).
		if !strings.Contains(h[kafka.HeaderError], "refused by Doris") || !strings.Contains(h[kafka.HeaderError], "_load_error_log") ||
			h[kafka.HeaderOffset] == "" {
			t.Errorf("rejected dead letter headers %v: want Doris's reason, its error log and the offset", h)
		}
	}
	if rejected != 3 {
		t.Errorf("%d dead letters of reason rejected in the topic, want 3", rejected)
	}
	t.Logf("3 rows Doris refuses among %d records (checkpoints of %d rows): %d refused loads (labels burnt)", n, e.maxRows, failures)
}

// Bisection is bounded: once it spent records.dead_letter_max_bisect_loads
// refused loads, Run stops with the *RejectedError, which says so; nothing
// of the refused range is lost (a restart resumes from the last decision).
func TestBisectionBudgetStops(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.maxRows, e.bisectMax = 32, 2
	e.refused = map[int]bool{20: true}
	e.produce(40, nil)
	p := e.process(40, nil, nil)
	err := p.conn.Run(ctxT(t))
	var re *kafka.RejectedError
	if !errors.As(err, &re) || re.BisectFailures != 2 || !strings.Contains(err.Error(), "records.dead_letter_max_bisect_loads") {
		t.Fatalf("Run: %v, want a *RejectedError saying bisection spent its 2 refused loads", err)
	}
	if n := p.conn.Metrics().CheckpointFailures.Load(); n != 3 {
		t.Fatalf("%d refused loads, want 3 (the first and the budget of 2)", n)
	}
}

// A dead-letter topic with a small max.message.bytes: franz-go would batch
// a decision's dead letters (incompressible here) into a batch the broker
// refuses at every attempt (seen: 2,835 refused transactions in 20 s).
// They are produced in chunks that fit, and each a record over the limit
// is truncated: every bad record is in the topic once, no checkpoint
// fails.
func TestDeadLettersFitASmallMaxMessageBytes(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	limit := "4096"
	if _, err := admin(t, e.kc).AlterTopicConfigs(ctxT(t),
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: &limit}}, dlTopic); err != nil {
		t.Fatal(err)
	}
	e.maxRows = 1000
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 20 {
		b := make([]byte, 1000)
		if i == 7 {
			b = make([]byte, 9000) // over the limit alone: truncated
		}
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		b[0] = 'x' // not JSON
		recs = append(recs, &kgo.Record{Value: b})
	}
	if err := cl.ProduceSync(ctxT(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p := e.process(20, nil, nil)
	if err := p.conn.Run(ctxT(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := p.conn.Metrics().CheckpointFailures.Load(); n != 0 {
		t.Fatalf("%d failed checkpoints, want none", n)
	}
	got := e.dlqValues()
	if len(got) != 20 {
		t.Fatalf("dead-letter topic holds %d distinct values, want the 20 bad records", len(got))
	}
	for v, n := range got {
		if n != 1 {
			t.Errorf("a dead letter of %d bytes is there %d times, want once", len(v), n)
		}
	}
	if n := p.conn.Metrics().DeadLettersTruncated(); n != 1 {
		t.Errorf("%d dead letters truncated, want 1", n)
	}
}

// A heal is never bisected: its dead letters went out with its first
// decision, and splitting it would produce those after the split again.
// Here the first process loaded a type error as NULL (non-strict), the
// decision's txn was then aborted by Doris, and the next process, now with
// strict_mode, heals it: Doris refuses the replay, and Run stops with the
// refusal instead of bisecting.
func TestHealIsNotBisected(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 8 {
		v := fmt.Sprintf(`{"id":%d,"v":"v"}`, i)
		if i == 1 {
			v = `{"id":"x","v":"v"}` // NULL without strict_mode, refused with it
		}
		recs = append(recs, &kgo.Record{Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctxT(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterDecide, loader.Crash()); err != nil {
		t.Fatal(err)
	}
	if err := e.process(8, fps, nil).conn.Run(ctxT(t)); !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("first run: %v, want a crash after the first decision", err)
	}
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("aborted %d precommitted txns, want the decided one", n)
	}
	e.props = map[string]string{"strict_mode": "true"}
	q := e.process(8, nil, nil)
	err = q.conn.Run(ctxT(t))
	var re *kafka.RejectedError
	if !errors.As(err, &re) || re.BisectFailures != 0 {
		t.Fatalf("second run: %v, want the heal's refusal, not a bisection", err)
	}
	if n := q.conn.Metrics().CheckpointFailures.Load(); n != 1 {
		t.Fatalf("%d refused loads, want 1 (no bisection of a heal)", n)
	}
	if got := e.dlqValues(); len(got) != 0 {
		t.Fatalf("dead-letter topic holds %v, want nothing", got)
	}
}

// Bisection over two partitions: the refused range spans both, records of
// the two interleave differently on every re-read, and the refused rows
// (two per partition) are still found, dead-lettered once, and every other
// record loaded once.
func TestBisectionAcrossPartitions(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.maxRows = 16
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 40
	refused := map[int]bool{3: true, 10: true, 11: true, 30: true}
	var recs []*kgo.Record
	var bads []string
	for i := range n {
		v := fmt.Sprintf(`{"id":%d,"v":"v%d"}`, i, i)
		if refused[i] {
			v = fmt.Sprintf(`{"id":%d,"v":"%0100d"}`, i, i) // longer than VARCHAR(32)
			bads = append(bads, v)
		}
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctxT(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	e.drainTo = map[int32]int64{0: n / 2, 1: n / 2}
	p := e.process(0, nil, nil)
	if err := p.conn.Run(ctxT(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(n, refused, bads)
	t.Logf("4 refused rows among %d records over 2 partitions (checkpoints of %d rows): %d refused loads",
		n, e.maxRows, p.conn.Metrics().CheckpointFailures.Load())
}
