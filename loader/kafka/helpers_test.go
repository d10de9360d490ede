package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

const (
	testDB    = "db"
	testTopic = "orders"
	// ordersDDL is keyed by the producer's id; DUPLICATE KEY keeps every
	// loaded copy, so duplicates are visible.
	ordersDDL = "CREATE TABLE orders (id BIGINT, v VARCHAR(32)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"
)

// env is what survives a crash of the sink: a Kafka cluster, a Doris
// emulator and a store directory.
type env struct {
	t      *testing.T
	kc     *kfake.Cluster
	adm    *kadm.Client
	srv    *doristest.Server
	client *doris.Client
	dir    string
	table  string
	props  map[string]string
	format string
	// subLoads is the loader's Config.SubLoads (0: default).
	subLoads int
	// storeKnobs are the testing hooks of the file store e.loader opens.
	storeKnobs checkpoint.FileKnobs
}

func newEnv(t *testing.T, partitions int32) *env {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, testTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	acl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(acl.Close)
	srv, err := doristest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.CreateDatabase(testDB); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateTable(testDB, ordersDDL); err != nil {
		t.Fatal(err)
	}
	client, err := doris.NewClient(doris.Config{FE: []string{srv.FEURL()}, MySQL: srv.MySQLAddr(), User: "root",
		MaxRetries: -1, RequestTimeout: 10 * time.Second, LoadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &env{t: t, kc: kc, adm: kadm.NewClient(acl), srv: srv, client: client, dir: t.TempDir(), table: "orders",
		format: FormatJSON}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// produce writes recs (topic defaulted) and waits for the acks.
func (e *env) produce(recs ...*kgo.Record) {
	e.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kc.ListenAddrs()...), kgo.DefaultProduceTopic(testTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// produceIDs writes ids [from, to) as JSON rows, id i to partition
// i % partitions.
func (e *env) produceIDs(from, to int, partitions int32) {
	e.t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i) % partitions, Value: fmt.Appendf(nil, `{"id":%d,"v":"v%d"}`, i, i)})
	}
	e.produce(recs...)
}

// end returns the end offsets of the topic as a Position.
func (e *env) end(topic string) Position {
	e.t.Helper()
	lo, err := e.adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		e.t.Fatal(err)
	}
	p := Position{Topic: topic, Offsets: map[int32]int64{}}
	lo.Each(func(o kadm.ListedOffset) { p.Offsets[o.Partition] = o.Offset })
	return p
}

// loader opens a Loader on e's store directory (a new "process").
func (e *env) loader(fps *loader.Failpoints) *loader.Loader {
	e.t.Helper()
	owner := checkpoint.Owner{Job: "kafka-test", DB: testDB, Table: e.table, Source: "kafka:" + testTopic, Writer: "0"}
	st, err := checkpoint.OpenFileWithKnobs(e.dir, owner, e.storeKnobs)
	if err != nil {
		e.t.Fatal(err)
	}
	ld, err := loader.New(e.client, loader.Config{Job: owner.Job, DB: testDB, Table: e.table, Source: owner.Source,
		Format: LoaderFormat(e.format), Properties: e.props, Store: st, LedgerDir: e.dir, Failpoints: fps, SubLoads: e.subLoads,
		Retry: loader.Retry{Initial: time.Millisecond, Max: 5 * time.Millisecond, MaxElapsed: 5 * time.Second}})
	if err != nil {
		st.Close()
		e.t.Fatal(err)
	}
	return ld
}

// config is the Connector config of the tests: no time trigger (1h), a
// row cap so that a run has several checkpoints.
func (e *env) config() Config {
	return Config{Brokers: e.kc.ListenAddrs(), Topic: testTopic, Group: "doris-sink-test", Format: e.format,
		CheckpointInterval: time.Hour, CheckpointMaxRows: 7, PartitionRefresh: -1}
}

// connector builds a Connector on a new Loader.
func (e *env) connector(cfg Config, fps *loader.Failpoints, opts ...Opt) *Connector {
	e.t.Helper()
	ld := e.loader(fps)
	c, err := New(cfg, ld, append([]Opt{WithRecoverBackoff(0, 0)}, opts...)...)
	if err != nil {
		ld.Close(context.Background())
		e.t.Fatal(err)
	}
	return c
}

// runToEnd runs c until it consumed everything up to the topic's current
// end, then drains it; it returns Run's error.
func (e *env) runToEnd(ctx context.Context, c *Connector) error {
	e.t.Helper()
	want := e.end(testTopic)
	c.knobs.AfterPoll = chain(c.knobs.AfterPoll, func(p Position) {
		if covers(p, want) {
			c.Drain()
		}
	})
	return c.Run(ctx)
}

func chain(a, b func(Position)) func(Position) {
	if a == nil {
		return b
	}
	return func(p Position) { a(p); b(p) }
}

// covers reports whether p has read everything up to want.
func covers(p, want Position) bool {
	for t, offs := range want.PerTopic() {
		for part, o := range offs {
			if p.Of(t)[part] < o {
				return false
			}
		}
	}
	return true
}

// ids returns how many rows of e.table hold each id (first column).
func (e *env) ids() map[int64]int {
	e.t.Helper()
	rows, err := e.srv.Rows(testDB, e.table)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int64]int{}
	for _, r := range rows {
		out[r[0].(int64)]++
	}
	return out
}

// checkExactlyOnce asserts that ids [0, n) minus skip are each loaded
// exactly once and nothing else is.
func (e *env) checkExactlyOnce(n int, skip ...int64) {
	e.t.Helper()
	got := e.ids()
	skipped := map[int64]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	var bad []string
	for i := int64(0); i < int64(n); i++ {
		want := 1
		if skipped[i] {
			want = 0
		}
		if got[i] != want {
			bad = append(bad, fmt.Sprintf("id %d ×%d", i, got[i]))
		}
		delete(got, i)
	}
	for id, k := range got {
		bad = append(bad, fmt.Sprintf("unexpected id %d ×%d", id, k))
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		e.t.Fatalf("rows are not exactly ids [0,%d) minus %v: %v", n, skip, bad)
	}
}

// recorder collects checkpoint stats.
type recorder struct {
	mu  sync.Mutex
	all []CheckpointStats
}

func (r *recorder) add(s CheckpointStats) { r.mu.Lock(); r.all = append(r.all, s); r.mu.Unlock() }

func (r *recorder) stats() []CheckpointStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]CheckpointStats(nil), r.all...)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
