package run

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group-mode safety (issue 12, from the review of group mode): a zombie
// never rebuilds a refused slot, the slot topic arbitrates the layout, the
// revoke bound holds for every slot, a member the group refuses fails.

// logged reports whether m logged a line whose msg starts with prefix
// (e.mu need not be held).
func (m *groupMember) logged(prefix string) bool {
	m.tap.mu.Lock()
	defer m.tap.mu.Unlock()
	for _, l := range m.tap.lines {
		if s, _ := l["msg"].(string); strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// loggedCount counts m's log lines whose msg starts with prefix.
func (m *groupMember) loggedCount(prefix string) int {
	m.tap.mu.Lock()
	defer m.tap.mu.Unlock()
	n := 0
	for _, l := range m.tap.lines {
		if s, _ := l["msg"].(string); strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// zombieHeartbeats makes the cluster answer the heartbeats of the first
// member that heartbeats once armed with success without the group
// coordinator seeing them: the group's session for that member expires
// (the group removes it and rebalances) while the member's client goes on
// believing it is in the group, as a SIGSTOP'd process whose heartbeat
// goroutine has not run yet after SIGCONT.
func zombieHeartbeats(e *groupEnv) (arm func()) {
	var mu sync.Mutex
	armed, zombie := false, ""
	e.kc.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.kc.KeepControl()
		r := req.(*kmsg.HeartbeatRequest)
		mu.Lock()
		defer mu.Unlock()
		if !armed {
			return nil, nil, false
		}
		if zombie == "" {
			zombie = r.MemberID
		}
		if r.MemberID != zombie {
			return nil, nil, false
		}
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.Version = r.Version
		return resp, nil, true
	})
	return func() { mu.Lock(); armed = true; mu.Unlock() }
}

// A member whose session expired without its client noticing (paused
// past the session timeout, then resumed) has its next decision refused
// with UNKNOWN_MEMBER_ID. Its local view (member.owned) still says it owns
// the slot, but a rebuild from that view would open the slot's log
// (InitProducerID: it fences whichever member the group gave the slot to),
// run recovery over that member's open checkpoint, announce and load
// again, all as a non-member. The slot is suspended until an assignment
// of a newer generation includes it (a rejoin). Here the zombie is never
// told (its heartbeats are answered for it), so it never rebuilds, and b,
// the live owner of every slot, loads everything and is never fenced.
func TestGroupZombieRefusedDecisionNeverRebuildsBeforeRejoin(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 2)
	arm := zombieHeartbeats(e)
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 2})
	e.waitUntil("both slot jobs of a running", func() bool { return a.starts == 2 })
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	arm()
	refusal := "coordinator log: decision refused for its group generation"
	// Keep a deciding until the group, having expired a's session, refuses
	// one of its decisions (waits on events only: each round ends when
	// every record is decided or the refusal is logged).
	for !a.logged(refusal) {
		e.produce(10)
		want := map[int32]int64{}
		for i := 0; i < e.produced; i++ {
			want[int32(i)%e.parts]++
		}
		e.waitUntil("a round decided or a's decision refused", func() bool {
			if a.logged(refusal) {
				return true
			}
			ends, _ := e.decidedLocked()
			for p, o := range want {
				if ends[p] < o {
					return false
				}
			}
			return true
		})
	}
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{b: 2})
	e.waitAllDecided()
	if err := e.stop(b); err != nil {
		t.Fatalf("member b (the live owner of every slot): %v", err)
	}
	e.mu.Lock()
	rebuilt := a.rebuilt
	e.mu.Unlock()
	if rebuilt > 0 {
		t.Errorf("the zombie a rebuilt %d slot job(s) after the group refused its decision (UNKNOWN_MEMBER_ID) and before "+
			"any rejoin: it opened the slot's log and fenced the slot's live owner", rebuilt)
	}
	e.checkExactlyOnce()
}

// Layout safety on a fresh job: the state records' slots check alone
// holds only once something is saved, so a standalone process (job.slots
// 1) and a group member (job.slots 2) of one job config started together
// would both pass it, and slot 1 (transactional id doris-sink.<job>.1,
// which nothing fences) would load its partitions while the standalone
// process loads them too. The slot topic is the arbiter: every start
// creates or checks it before any store opens, CreateTopics is atomic, and
// the start that finds it with another partition count is refused before
// it reads anything. Deterministic here: the member's two slot jobs are
// held after their stores opened (the topic exists with 2 partitions);
// the standalone start is refused with *SlotTopicError naming 2 and 1 and
// `checkpoint reslot`; the member then loads every record exactly once.
// The reverse order (standalone first) is TestGroupStartOverStandaloneStateRefused.
func TestGroupSlotsMismatchOnFreshJobFirstStartWins(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 2)
	e.produce(40)
	var mu sync.Mutex
	held := map[int]chan struct{}{0: make(chan struct{}), 1: make(chan struct{})}
	reached := make(chan int, 2)
	e.slotStarted = func(_ *groupMember, slot, rebuilt int) {
		mu.Lock()
		ch := held[slot]
		mu.Unlock()
		if rebuilt > 0 || ch == nil {
			return
		}
		reached <- slot
		<-ch
	}
	a := e.start("a", "")
	<-reached
	<-reached // both slot stores open, nothing saved
	e.slots = 1
	s := e.start("s", "") // a standalone run of the same job config but job.slots 1
	e.mu.Lock()
	s.mayFail = true
	e.mu.Unlock()
	err := <-s.done
	var ste *SlotTopicError
	if !errors.As(err, &ste) || ste.Partitions != 2 || ste.Slots != 1 || !strings.Contains(err.Error(), "checkpoint reslot") {
		t.Fatalf("standalone start while a group member of job.slots 2 runs: %v, want *SlotTopicError 2 partitions vs "+
			"job.slots 1 naming checkpoint reslot", err)
	}
	if s.loggedCount("checkpoint decided") > 0 || s.loggedCount("coordinator: decisions in Kafka") > 0 {
		t.Error("the refused standalone start opened its store or decided a checkpoint")
	}
	close(held[0])
	close(held[1])
	e.waitAllDecided()
	if err := e.stop(a); err != nil {
		t.Fatalf("member a: %v", err)
	}
	e.checkExactlyOnce()
}

// A member the group coordinator refuses to admit for a reason retrying
// cannot fix (here INVALID_SESSION_TIMEOUT: the broker's
// group.max.session.timeout.ms is below kafka.session_timeout) would own
// no slot, load nothing and never exit if the membership client's errors
// were only logged. Run ends with a *GroupRefusedError naming the group
// and kafka.session_timeout. The wait below is a hang guard, not a timing
// assertion.
func TestGroupMemberRefusedByGroupFailsLoudly(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2, kfake.GroupMaxSessionTimeout(500*time.Millisecond))
	e.produce(10)
	a := e.start("a", "") // kafka.session_timeout 1s > the broker's 500ms maximum
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	select {
	case err := <-a.done:
		var gr *GroupRefusedError
		if !errors.As(err, &gr) || !errors.Is(err, kerr.InvalidSessionTimeout) || !strings.Contains(err.Error(), "kafka.session_timeout") ||
			!strings.Contains(err.Error(), gr.Group) || gr.Group == "" {
			t.Errorf("member refused by the group: Run = %v, want a *GroupRefusedError naming the group and kafka.session_timeout", err)
		}
	case <-guard.C:
		e.mu.Lock()
		e.dumpLogsLocked()
		e.mu.Unlock()
		t.Fatal("a member the group coordinator refuses (INVALID_SESSION_TIMEOUT) never ends: it loads nothing and " +
			"only logs warnings")
	}
}
