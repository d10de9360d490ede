// Package kafkatest holds helpers for tests and sandboxes that run on
// franz-go's in-process broker, kfake (github.com/twmb/franz-go/pkg/kfake).
package kafkatest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KeepParkedMembers makes the classic consumer groups of c keep, as Kafka
// does, every member that has a JoinGroup or SyncGroup parked at the
// coordinator: such a member is never expired by its session timeout; the
// join round itself is bounded by the rebalance timeout (kfake's own
// round timer drops members that did not rejoin).
//
// Why: kfake (v0.0.0-20260918054303-01f206a7e32c, groups.go) runs the
// session timer of a member while its JoinGroup or SyncGroup waits for the
// round (a client heartbeats only between rounds) and, when it fires,
// removes the member without answering the parked request. The client then
// waits for its request timeout (franz-go: rebalance timeout + 10 s) with
// no group, and, when that happens to every member (a member slow to
// rejoin holding the round past the others' session timeout), nothing is
// consumed for minutes (issue 29). Kafka's coordinator never expires a
// member with a request in purgatory: apache/kafka
// group-coordinator/src/main/java/org/apache/kafka/coordinator/group/classic/ClassicGroupMember.java,
// hasSatisfiedHeartbeat ("Members that are awaiting a rebalance
// automatically satisfy expected heartbeats"; before KIP-848's rewrite,
// core/src/main/scala/kafka/coordinator/group/MemberMetadata.scala,
// shouldKeepAlive); the join round completes after rebalance.timeout.ms,
// removing the members that did not rejoin.
//
// How, without changing kfake: control functions observe (never handle)
// every JoinGroup and SyncGroup; while a member's request is parked (the
// group is PreparingRebalance, or CompletingRebalance at the request's
// generation, and the member is still in it) it is sent a Heartbeat on its
// behalf every tick, which refreshes its session timer as Kafka's purgatory
// rule would. Nothing else of the group changes: a heartbeat while
// PreparingRebalance or CompletingRebalance only restarts the member's
// session timer in kfake. Groups using the KIP-848 protocol are not
// affected (they have no parked requests).
//
// Call it right after kfake.NewCluster; the returned stop ends the
// keep-alive: call it before c.Close (kfake's GroupInfo waits forever on
// a closed cluster; stop does not, but a goroutine asking then stays). It
// returns an error when its admin client cannot be created.
func KeepParkedMembers(c *kfake.Cluster, tick time.Duration) (stop func(), err error) {
	if tick <= 0 {
		tick = 100 * time.Millisecond
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		return nil, err
	}
	k := &keeper{c: c, cl: cl, parked: map[parkedKey]parkedReq{}}
	ctx, cancel := context.WithCancel(context.Background())
	c.ControlKey(int16(kmsg.JoinGroup), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if req := r.(*kmsg.JoinGroupRequest); req.MemberID != "" && ctx.Err() == nil {
			go k.observed(ctx, parkedKey{req.Group, req.MemberID}, parkedReq{kind: kmsg.JoinGroup, instance: req.InstanceID})
		}
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.SyncGroup), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if req := r.(*kmsg.SyncGroupRequest); ctx.Err() == nil {
			go k.observed(ctx, parkedKey{req.Group, req.MemberID},
				parkedReq{kind: kmsg.SyncGroup, generation: req.Generation, instance: req.InstanceID})
		}
		return nil, nil, false
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				k.keepAlive(ctx)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			cl.Close()
		})
	}, nil
}

type parkedKey struct{ group, member string }

// parkedReq is a member's request waiting at the coordinator.
type parkedReq struct {
	kind       kmsg.Key
	generation int32 // the round's generation (a JoinGroup: the generation it ends)
	instance   *string
}

type keeper struct {
	c  *kfake.Cluster
	cl *kgo.Client

	mu     sync.Mutex
	parked map[parkedKey]parkedReq
}

// observed runs after the coordinator handled the request r of member k
// (GroupInfo runs on the cluster's loop, after the request): it is parked
// when the group still waits for the round r belongs to.
func (k *keeper) observed(ctx context.Context, key parkedKey, r parkedReq) {
	gi := k.groupInfo(ctx, key.group)
	if gi == nil || ctx.Err() != nil {
		return
	}
	if r.kind == kmsg.JoinGroup {
		r.generation = gi.Epoch
	}
	if !stillParked(gi, key.member, r) {
		return
	}
	k.mu.Lock()
	k.parked[key] = r
	k.mu.Unlock()
}

// groupInfo is c.GroupInfo(group), or nil once ctx ends (GroupInfo waits
// for the cluster's loop, which a closed cluster no longer runs).
func (k *keeper) groupInfo(ctx context.Context, group string) *kfake.GroupInfo {
	ch := make(chan *kfake.GroupInfo, 1)
	go func() { ch <- k.c.GroupInfo(group) }()
	select {
	case gi := <-ch:
		return gi
	case <-ctx.Done():
		return nil
	}
}

// stillParked reports whether member's request r is still waiting in the
// group gi.
func stillParked(gi *kfake.GroupInfo, member string, r parkedReq) bool {
	if gi == nil || gi.Epoch != r.generation ||
		!slices.ContainsFunc(gi.Members, func(m kfake.GroupMember) bool { return m.MemberID == member }) {
		return false
	}
	switch r.kind {
	case kmsg.JoinGroup:
		return gi.State == "PreparingRebalance"
	case kmsg.SyncGroup:
		return gi.State == "CompletingRebalance"
	}
	return false
}

// keepAlive heartbeats for every member whose request is still parked and
// forgets the others.
func (k *keeper) keepAlive(ctx context.Context) {
	k.mu.Lock()
	snapshot := make(map[parkedKey]parkedReq, len(k.parked))
	for key, r := range k.parked {
		snapshot[key] = r
	}
	k.mu.Unlock()
	infos := map[string]*kfake.GroupInfo{}
	for key, r := range snapshot {
		gi, ok := infos[key.group]
		if !ok {
			gi = k.groupInfo(ctx, key.group)
			infos[key.group] = gi
		}
		if !stillParked(gi, key.member, r) {
			k.mu.Lock()
			if k.parked[key] == r {
				delete(k.parked, key)
			}
			k.mu.Unlock()
			continue
		}
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = key.group, key.member, r.generation, r.instance
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_, _ = hb.RequestWith(rctx, k.cl) // REBALANCE_IN_PROGRESS is the expected answer; a lost one is retried next tick
		cancel()
	}
}
