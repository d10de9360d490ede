package coordlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(2, "orders")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testConfig(c *kfake.Cluster, job string) Config {
	return Config{Job: job, Group: "g-" + job, ClientOpts: []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)},
		Backoff: time.Millisecond}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustOpen(t *testing.T, cfg Config) *Log {
	t.Helper()
	l, err := Open(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func admin(t *testing.T, c *kfake.Cluster) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func offsets(id uint64, o0, o1 int64) *Offsets {
	return &Offsets{Topic: "orders", Partitions: map[int32]int64{0: o0, 1: o1}, Metadata: OffsetMetadata(id)}
}

// Open creates the compacted state topic; Commit writes the record and the
// group offsets together; Load returns the latest record.
func TestCommitLoadAndOffsets(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	l := mustOpen(t, testConfig(c, "j1"))
	if _, ok, err := l.Load(ctx); err != nil || ok {
		t.Fatalf("Load of a new log: ok %v err %v, want none", ok, err)
	}
	for i, v := range []string{"one", "two"} {
		if err := l.Commit(ctx, []byte(v), offsets(uint64(i+1), int64(10*(i+1)), 5)); err != nil {
			t.Fatal(err)
		}
	}
	rec, ok, err := l.Load(ctx)
	if err != nil || !ok || string(rec.Value) != "two" {
		t.Fatalf("Load = %q ok %v err %v, want two", rec.Value, ok, err)
	}
	adm := admin(t, c)
	rcs, err := adm.DescribeTopicConfigs(ctx, StateTopic("j1"))
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On(StateTopic("j1"), nil)
	var policy string
	for _, cf := range rc.Configs {
		if cf.Key == "cleanup.policy" && cf.Value != nil {
			policy = *cf.Value
		}
	}
	if policy != "compact" {
		t.Errorf("state topic cleanup.policy = %q, want compact", policy)
	}
	fo, err := adm.FetchOffsets(ctx, "g-j1")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := fo.Lookup("orders", 0)
	if o.At != 20 || o.Metadata != "doris-sink:chk=2" {
		t.Errorf("group offset p0 = %d %q, want 20 doris-sink:chk=2", o.At, o.Metadata)
	}
	// A second log of the same job (a restart) loads what the first committed.
	l2 := mustOpen(t, testConfig(c, "j1"))
	rec, ok, err = l2.Load(ctx)
	if err != nil || !ok || string(rec.Value) != "two" {
		t.Fatalf("reopened Load = %q ok %v err %v, want two", rec.Value, ok, err)
	}
	if l2.Incarnation().Epoch <= l.Incarnation().Epoch && l2.Incarnation().ProducerID == l.Incarnation().ProducerID {
		t.Errorf("reopen incarnation %v not after %v", l2.Incarnation(), l.Incarnation())
	}
}

// Opening the same job again fences the first incarnation: its next Commit
// and Load fail with ErrFenced naming the job and the state topic, and the
// new one's state is what Load returns.
func TestOpenFencesPredecessor(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	a := mustOpen(t, testConfig(c, "jf"))
	if err := a.Commit(ctx, []byte("a1"), offsets(1, 1, 1)); err != nil {
		t.Fatal(err)
	}
	b := mustOpen(t, testConfig(c, "jf"))
	if rec, _, err := b.Load(ctx); err != nil || string(rec.Value) != "a1" {
		t.Fatalf("new incarnation Load = %q, %v; want a1", rec.Value, err)
	}
	err := a.Commit(ctx, []byte("a2"), offsets(2, 2, 2))
	var fe *FencedError
	if !errors.Is(err, ErrFenced) || !errors.As(err, &fe) || fe.Job != "jf" || fe.StateTopic != StateTopic("jf") {
		t.Fatalf("fenced Commit: %v, want a *FencedError of job jf", err)
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Errorf("fenced Commit does not wrap the Kafka error: %v", err)
	}
	if _, _, err := a.Load(ctx); !errors.Is(err, ErrFenced) {
		t.Errorf("fenced Load: %v, want ErrFenced", err)
	}
	if err := b.Commit(ctx, []byte("b1"), offsets(2, 3, 3)); err != nil {
		t.Fatal(err)
	}
	if rec, _, err := b.Load(ctx); err != nil || string(rec.Value) != "b1" {
		t.Fatalf("Load = %q, %v; want b1", rec.Value, err)
	}
}

// A fenced incarnation that has not written since it was fenced learns it
// from the newer record on Load.
func TestLoadSeesNewerIncarnation(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	a := mustOpen(t, testConfig(c, "jl"))
	b := mustOpen(t, testConfig(c, "jl"))
	if err := b.Commit(ctx, []byte("b1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Load(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("Load after a newer incarnation wrote: %v, want ErrFenced", err)
	}
}

// A TxnOffsetCommit refused inside the transaction fails the whole Commit:
// neither the record nor any offset is visible.
func TestOffsetCommitFailureFailsWholeCommit(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	l := mustOpen(t, testConfig(c, "jo"))
	if err := l.Commit(ctx, []byte("v1"), offsets(1, 1, 1)); err != nil {
		t.Fatal(err)
	}
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Partitions: []int32{1},
		Err: kerr.GroupAuthorizationFailed, Count: -1})
	err := l.Commit(ctx, []byte("v2"), offsets(2, 2, 2))
	if !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("Commit with a refused partition: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
	if h.Hits() == 0 {
		t.Fatal("fault not hit")
	}
	h.Remove()
	rec, _, err := l.Load(ctx)
	if err != nil || string(rec.Value) != "v1" {
		t.Fatalf("after the failed Commit Load = %q, %v; want v1 (nothing of v2 visible)", rec.Value, err)
	}
	fo, err := admin(t, c).FetchOffsets(ctx, "g-jo")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		if o, _ := fo.Lookup("orders", p); o.At != 1 {
			t.Errorf("partition %d offset %d after the failed Commit, want 1 (no partial commit)", p, o.At)
		}
	}
	// The log stays usable.
	if err := l.Commit(ctx, []byte("v3"), offsets(2, 3, 3)); err != nil {
		t.Fatal(err)
	}
}

// Retriable answers (the coordinator not available) are retried within
// Attempts; past the bound Commit fails and nothing is visible.
func TestCommitRetriesCoordinatorNotAvailable(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	cfg := testConfig(c, "jr")
	cfg.Attempts = 3
	// kgo retries a coordinator error itself (RequestRetries); bound it
	// low so the test reaches the end of the bound at once.
	cfg.ClientOpts = append(cfg.ClientOpts, kgo.RequestRetries(1), kgo.RetryBackoffFn(func(int) time.Duration { return time.Millisecond }))
	l := mustOpen(t, cfg)
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: kerr.CoordinatorNotAvailable, Count: 3})
	if err := l.Commit(ctx, []byte("v1"), offsets(1, 1, 1)); err != nil {
		t.Fatalf("Commit with 2 transient failures: %v", err)
	}
	if h.Hits() < 3 {
		t.Errorf("fault hits %d, want 3", h.Hits())
	}
	h = c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: kerr.CoordinatorNotAvailable, Count: -1})
	err := l.Commit(ctx, []byte("v2"), offsets(2, 2, 2))
	h.Remove()
	t.Logf("past bound: %v", err)
	if !errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, ErrFenced) {
		t.Fatalf("Commit past the retry bound: %v, want COORDINATOR_NOT_AVAILABLE", err)
	}
	if rec, _, err := l.Load(ctx); err != nil || string(rec.Value) != "v1" {
		t.Fatalf("Load = %q, %v; want v1", rec.Value, err)
	}
}

// An existing state topic that is not compacted is refused, naming the
// topic and the configuration to set.
func TestRefusesUncompactedStateTopic(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	if _, err := admin(t, c).CreateTopic(ctxT(t), 1, 1, nil, StateTopic("jd")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctxT(t), testConfig(c, "jd"))
	var te *TopicError
	if !errors.As(err, &te) || te.Topic != StateTopic("jd") {
		t.Fatalf("Open over a delete-policy topic: %v, want *TopicError", err)
	}
	t.Log(err)
}

// An idle incarnation learns from CheckFenced that a newer one opened, and
// CheckFenced of the live one finds nothing, also after its transactions
// bumped its epoch.
func TestCheckFenced(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	a := mustOpen(t, testConfig(c, "jc"))
	if err := a.Commit(ctx, []byte("a1"), offsets(1, 1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := a.CheckFenced(ctx); err != nil {
		t.Fatalf("CheckFenced of the only incarnation: %v", err)
	}
	b := mustOpen(t, testConfig(c, "jc"))
	if err := a.CheckFenced(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("CheckFenced after a newer open: %v, want ErrFenced", err)
	}
	for range 2 {
		if err := b.Commit(ctx, []byte("b"), offsets(2, 2, 2)); err != nil {
			t.Fatal(err)
		}
		if err := b.CheckFenced(ctx); err != nil {
			t.Fatalf("CheckFenced of the newest incarnation: %v", err)
		}
	}
}
