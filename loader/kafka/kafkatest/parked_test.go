package kafkatest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	testGroup   = "g"
	testSession = 300 // ms
)

// rawMember is one classic group member driven by hand (raw requests, one
// client each so that parked requests do not queue behind each other).
type rawMember struct {
	t   *testing.T
	cl  *kgo.Client
	id  string
	gen int32
}

func newRawMember(t *testing.T, c *kfake.Cluster) *rawMember {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &rawMember{t: t, cl: cl}
}

func (m *rawMember) joinReq() *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID, req.ProtocolType = testGroup, m.id, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = testSession, 20_000
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{"t"}
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", meta.AppendTo(nil)
	req.Protocols = append(req.Protocols, p)
	return req
}

// join sends a JoinGroup (getting a member ID first) and returns the
// answer; it may be parked until the round completes.
func (m *rawMember) join(ctx context.Context) (*kmsg.JoinGroupResponse, error) {
	for {
		resp, err := m.joinReq().RequestWith(ctx, m.cl)
		if err != nil {
			return nil, err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); errors.Is(err, kerr.MemberIDRequired) {
			m.id = resp.MemberID
			continue
		} else if err != nil {
			return nil, err
		}
		m.gen = resp.Generation
		return resp, nil
	}
}

// sync sends the SyncGroup of the round (the leader assigns nothing).
func (m *rawMember) sync(ctx context.Context, jr *kmsg.JoinGroupResponse) error {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = testGroup, m.id, m.gen
	req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), jr.Protocol
	for _, jm := range jr.Members {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = jm.MemberID
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}

// heartbeat returns the coordinator's answer (nil, or e.g.
// REBALANCE_IN_PROGRESS).
func (m *rawMember) heartbeat(ctx context.Context) error {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = testGroup, m.id, m.gen
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}

type joined struct {
	resp *kmsg.JoinGroupResponse
	err  error
}

// Issue 29: a member whose JoinGroup is parked for the round longer than
// its session timeout (another member, alive and heartbeating, is slow to
// rejoin) stays in the group and is answered when the round completes, as
// Kafka's coordinator does (MemberMetadata.shouldKeepAlive: never expire a
// member with a request in purgatory). kfake alone expires it and never
// answers its JoinGroup: the client waits for its request timeout with no
// group (the stall of the issue).
func TestKeepParkedMembersKeepsAParkedJoinAcrossItsSessionTimeout(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	stop, err := KeepParkedMembers(c, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A alone: generation 1, A leads.
	a, b := newRawMember(t, c), newRawMember(t, c)
	jr, err := a.join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.sync(ctx, jr); err != nil {
		t.Fatal(err)
	}
	// B joins (parked until A rejoins); A learns of the round from its
	// heartbeat and rejoins: generation 2 with both.
	bj := make(chan joined, 1)
	go func() { r, err := b.join(ctx); bj <- joined{r, err} }()
	for {
		err := a.heartbeat(ctx)
		if errors.Is(err, kerr.RebalanceInProgress) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ja, err := a.join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jb := <-bj
	if jb.err != nil {
		t.Fatal(jb.err)
	}
	go func() { bj <- joined{nil, b.sync(ctx, jb.resp)} }()
	if err := a.sync(ctx, ja); err != nil {
		t.Fatal(err)
	}
	if jb := <-bj; jb.err != nil {
		t.Fatal(jb.err)
	}

	// A rejoins and waits for the round; B stays alive (heartbeats) but
	// rejoins only after A's session timeout passed three times over.
	aj := make(chan joined, 1)
	go func() { r, err := a.join(ctx); aj <- joined{r, err} }()
	parkedSince := time.Now()
	for {
		err := b.heartbeat(ctx)
		if err != nil && !errors.Is(err, kerr.RebalanceInProgress) {
			t.Fatalf("B's heartbeat while A waits: %v", err)
		}
		if time.Since(parkedSince) > 3*testSession*time.Millisecond {
			break
		}
		select {
		case <-time.After(50 * time.Millisecond): // B's heartbeat interval
		case r := <-aj:
			t.Fatalf("A's JoinGroup answered (%+v, %v) before B rejoined: the round did not wait for B", r.resp, r.err)
		}
	}
	jb2, err := b.join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The round completes with both: A's parked JoinGroup is answered at
	// once (kfake alone: A was expired and its request is never answered;
	// the client's 20 s timeout would be the first thing it hears).
	var ra joined
	select {
	case ra = <-aj:
	case <-time.After(10 * time.Second):
		t.Fatalf("A's JoinGroup, parked across its session timeout, was not answered when the round completed (gen %d, leader %s)",
			jb2.Generation, jb2.LeaderID)
	}
	if ra.err != nil {
		t.Fatalf("A's parked JoinGroup: %v", ra.err)
	}
	if ra.resp.Generation != jb2.Generation {
		t.Fatalf("A joined generation %d, B %d", ra.resp.Generation, jb2.Generation)
	}
	leader := ra.resp
	if leader.LeaderID != a.id {
		leader = jb2
	}
	var ids []string
	for _, m := range leader.Members {
		ids = append(ids, m.MemberID)
	}
	if want := []string{a.id, b.id}; !slices.Equal(sortedCopy(ids), sortedCopy(want)) {
		t.Fatalf("generation %d members %v, want %v (A kept across its parked wait)", leader.Generation, ids, want)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
