package coordlog

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// joinGroup makes one member join group (subscribed to topic) and waits
// for its first assignment; it returns the client.
func joinGroup(t *testing.T, c *kfake.Cluster, group, topic string) *kgo.Client {
	t.Helper()
	assigned := make(chan struct{})
	var once sync.Once
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { once.Do(func() { close(assigned) }) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx := ctxT(t)
	go func() {
		for ctx.Err() == nil {
			if cl.PollFetches(ctx).IsClientClosed() {
				return
			}
		}
	}()
	select {
	case <-assigned:
	case <-ctx.Done():
		t.Fatal("member never assigned")
	}
	return cl
}

// observeTxnOffsetCommits records the member id and generation of every
// TxnOffsetCommit the cluster receives.
func observeTxnOffsetCommits(c *kfake.Cluster) func() []GroupStamp {
	var mu sync.Mutex
	var seen []GroupStamp
	c.ControlKey(int16(kmsg.TxnOffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.TxnOffsetCommitRequest)
		mu.Lock()
		seen = append(seen, GroupStamp{MemberID: r.MemberID, Generation: r.Generation, InstanceID: r.InstanceID})
		mu.Unlock()
		return nil, nil, false
	})
	return func() []GroupStamp {
		mu.Lock()
		defer mu.Unlock()
		return append([]GroupStamp(nil), seen...)
	}
}

// In group mode a decision's TxnOffsetCommit carries the member id and
// generation Config.Stamp returned when the transaction began (not -1: the
// test fails if the stamp is not sent). A stale generation is refused by
// the group coordinator (ILLEGAL_GENERATION, kfake txns.go
// doTxnOffsetCommit → validateMemberGeneration, as Kafka's
// GroupCoordinator.handleTxnCommitOffsets): Commit returns a
// *GenerationError wrapping kafka.ErrNotOwner after one attempt (never
// resent), nothing of it is visible, the log stays usable. A Stamp that
// fails (the slot not owned) writes nothing.
func TestDecisionStampedWithGeneration(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	cfg := testConfig(c, "gs")
	member := joinGroup(t, c, cfg.Group, "orders")
	id, gen := member.GroupMetadata()
	if gen < 1 || id == "" {
		t.Fatalf("group metadata %q %d", id, gen)
	}
	seen := observeTxnOffsetCommits(c)
	stamp := GroupStamp{MemberID: id, Generation: gen}
	var stampErr error
	calls := 0
	cfg.Stamp = func() (GroupStamp, error) { calls++; return stamp, stampErr }
	l := mustOpen(t, cfg)

	if err := l.Commit(ctx, []byte("v1"), offsets(1, 5, 6)); err != nil {
		t.Fatalf("commit stamped with the live generation: %v", err)
	}
	if s := seen(); len(s) != 1 || s[0].MemberID != id || s[0].Generation != gen {
		t.Fatalf("TxnOffsetCommit stamps %+v, want member %s generation %d", s, id, gen)
	}

	stamp.Generation = gen - 1 // a generation the group has left behind
	calls = 0
	err := l.Commit(ctx, []byte("v2"), offsets(2, 7, 8))
	var ge *GenerationError
	if !errors.As(err, &ge) || !errors.Is(err, kafka.ErrNotOwner) || !errors.Is(err, kerr.IllegalGeneration) {
		t.Fatalf("commit with a stale generation: %v, want *GenerationError wrapping ErrNotOwner and ILLEGAL_GENERATION", err)
	}
	if ge.Stamp.Generation != gen-1 || ge.Group != cfg.Group || ge.TransactionalID != TransactionalID("gs", "0") {
		t.Errorf("GenerationError %+v", ge)
	}
	if calls != 1 || len(seen()) != 2 {
		t.Errorf("stale decision: %d stamps taken, %d TxnOffsetCommits sent; want 1 and 2 in all (never resent)", calls, len(seen()))
	}
	rec, _, err := l.Load(ctx)
	if err != nil || string(rec.Value) != "v1" {
		t.Fatalf("after the refused decision Load = %q, %v; want v1", rec.Value, err)
	}
	fo, err := admin(t, c).FetchOffsets(ctx, cfg.Group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fo.Lookup("orders", 0); o.At != 5 {
		t.Errorf("offset of orders/0 = %d after the refused decision, want 5", o.At)
	}

	stampErr = &NotOwnerError{Job: "gs", Scope: "0", Group: cfg.Group, Reason: "slot 0 not assigned"}
	err = l.Commit(ctx, []byte("v3"), offsets(3, 9, 9))
	if !errors.Is(err, kafka.ErrNotOwner) || len(seen()) != 2 {
		t.Fatalf("commit while not owner: %v (%d TxnOffsetCommits), want ErrNotOwner and none sent", err, len(seen()))
	}
	// A save without offsets (a committed mark) needs no stamp.
	if err := l.Commit(ctx, []byte("v4"), nil); err != nil {
		t.Fatalf("commit without offsets while not owner: %v", err)
	}
	stamp.Generation, stampErr = gen, nil
	if err := l.Commit(ctx, []byte("v5"), offsets(4, 9, 9)); err != nil {
		t.Fatalf("commit with the live generation again: %v", err)
	}
}
