package run

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pauseMember holds every group request (Heartbeat, JoinGroup, SyncGroup,
// LeaveGroup) of member name's membership client at the broker until
// resume is called, as a SIGSTOPped process would send none; held requests
// are then handled as usual (the zombie's first heartbeat learns it was
// expired).
func (e *groupEnv) pauseMember(name string) (resume func()) {
	prefix := memberClientID(name) + "-"
	released := make(chan struct{})
	var once sync.Once
	hold := func(member string) {
		if !strings.HasPrefix(member, prefix) {
			return
		}
		select {
		case <-released:
		default:
			e.kc.SleepControl(func() { <-released })
		}
	}
	for _, key := range []kmsg.Key{kmsg.Heartbeat, kmsg.JoinGroup, kmsg.SyncGroup, kmsg.LeaveGroup} {
		e.kc.ControlKey(int16(key), func(r kmsg.Request) (kmsg.Response, error, bool) {
			e.kc.KeepControl()
			switch req := r.(type) {
			case *kmsg.HeartbeatRequest:
				hold(req.MemberID)
			case *kmsg.JoinGroupRequest:
				hold(req.MemberID)
			case *kmsg.SyncGroupRequest:
				hold(req.MemberID)
			case *kmsg.LeaveGroupRequest:
				for _, m := range req.Members {
					hold(m.MemberID)
				}
			}
			return nil, nil, false
		})
	}
	return func() { once.Do(func() { close(released) }) }
}

// joinsOf calls seen with the member ID of every JoinGroup member name's
// membership client sends from now on.
func (e *groupEnv) joinsOf(name string, seen func(memberID string)) {
	prefix := memberClientID(name) + "-"
	e.kc.ControlKey(int16(kmsg.JoinGroup), func(r kmsg.Request) (kmsg.Response, error, bool) {
		e.kc.KeepControl()
		if req := r.(*kmsg.JoinGroupRequest); strings.HasPrefix(req.MemberID, prefix) {
			seen(req.MemberID)
		}
		return nil, nil, false
	})
}

// Issue 29: a member slow to rejoin (z, its hand-over held while it keeps
// heartbeating) keeps a rebalance in flight (b joins) past the session
// timeout of the member already waiting in its JoinGroup (a), then is
// paused (a zombie: no request at all) across its own session timeout
// and resumed. As with Kafka's coordinator, a stays in the group while it
// waits (a member with a request in purgatory is never expired), the
// round completes once z's session expires, a and b take every slot
// without any join of a failing, every record is loaded exactly once, and
// every member's SIGTERM exits 0. (On kfake alone, a was expired while
// waiting and its JoinGroup never answered: it failed after the rebalance
// timeout + 10 s with an i/o timeout.)
func TestGroupZombieResumedDuringRebalanceGroupStaysLive(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 6, 3)
	e.rebalance = "4s"
	held := make(chan struct{})
	release := make(chan struct{})
	var holdOnce sync.Once
	e.revoking = func(m *groupMember, _ []int) {
		if m.name != "z" {
			return
		}
		first := false
		holdOnce.Do(func() { first = true })
		if first {
			close(held)
			<-release
		}
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	await := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	z := e.start("z", "")
	e.ownership(map[*groupMember]int{z: 3})
	e.produce(60)
	a := e.start("a", "")
	await("z's hand-over to a", held) // z hands slots over and stalls in its hand-over, heartbeating

	// b joins: a rebalance z does not rejoin while its hand-over stalls;
	// a rejoins and waits.
	var aJoins []string
	var joinsMu sync.Mutex
	aJoined := make(chan struct{})
	var joinedOnce sync.Once
	e.joinsOf("a", func(id string) {
		joinsMu.Lock()
		aJoins = append(aJoins, id)
		joinsMu.Unlock()
		joinedOnce.Do(func() { close(aJoined) })
	})
	b := e.start("b", "")
	await("a's JoinGroup of the rebalance", aJoined)
	joinsMu.Lock()
	waiting := aJoins[0]
	joinsMu.Unlock()
	// The fault: a waits three of its session timeouts for z, then z
	// stops sending anything (SIGSTOP) until its own session expired.
	time.Sleep(3 * time.Second) // the length of the fault, not a synchronisation
	resume := e.pauseMember("z")
	defer resume()
	paused := time.Now()
	e.produce(60)

	e.waitUntil("a and b own every slot", func() bool { return len(a.owned)+len(b.owned) == 3 })
	took := time.Since(paused)
	if gi := e.kc.GroupInfo(e.groupName()); gi == nil || !hasMember(gi.Members, waiting) {
		t.Errorf("a's member %s, waiting in its JoinGroup while z stalled, is not in the group (%+v): it was expired while "+
			"its request was parked (Kafka keeps such a member)", waiting, gi)
	}
	resume()
	close(release)
	e.waitAllDecided()
	t.Logf("after z's pause, a and b owned every slot in %v and every record was decided in %v (session 1s + rebalance 4s)",
		took.Round(10*time.Millisecond), time.Since(paused).Round(10*time.Millisecond))
	for _, m := range []*groupMember{a, b} {
		m.tap.mu.Lock()
		for _, l := range m.tap.lines {
			if msg, _ := l["msg"].(string); msg == "group mode: membership client error" &&
				strings.Contains(fmt.Sprint(l["err"]), "join") {
				t.Errorf("member %s: a join of its failed: %v", m.name, l["err"])
			}
		}
		m.tap.mu.Unlock()
	}
	for _, m := range []*groupMember{z, a, b} {
		if err := e.stop(m); err != nil {
			t.Errorf("member %s: SIGTERM: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}

// groupName is the members' consumer group (kafka.group's default).
func (e *groupEnv) groupName() string { return "doris-sink-" + groupJob }

func hasMember(ms []kfake.GroupMember, id string) bool {
	for _, m := range ms {
		if m.MemberID == id {
			return true
		}
	}
	return false
}

// Issue 29: the member's out-of-group and in-group reports
// (group.Hooks.GroupOut, GroupIn; the member's side is
// loader/kafka/group TestGroupSessionFailureWarnsWithGroupStateAndClearsReadiness)
// reach the process's group status (metrics, /status): out since the
// first failure with the failures counted, then in the group at the
// assignment's generation with its slots.
func TestGroupMembershipHooksFeedMetrics(t *testing.T) {
	t.Parallel()
	mt := metrics.New()
	var h group.Hooks
	metricHooks(&h, mt, "doris-sink-grp")
	since := time.Now()
	joinErr := &kgo.ErrGroupSession{Err: errors.New("unable to join group session: i/o timeout")}
	h.GroupOut(since, joinErr)
	h.GroupOut(since, joinErr)
	g := mt.Status().Membership
	if g == nil || g.InGroup || g.RebalancingSince == nil || g.SessionFailures != 2 || g.Group != "doris-sink-grp" {
		t.Fatalf("process group status %+v, want out of doris-sink-grp since the first failure, 2 failures", g)
	}
	h.GroupIn(4, []int{1})
	if g := mt.Status().Membership; !g.InGroup || g.RebalancingSince != nil || g.Generation != 4 || !slices.Equal(g.Slots, []int{1}) {
		t.Errorf("after an assignment: %+v, want in the group at generation 4 with slot 1", g)
	}
}
