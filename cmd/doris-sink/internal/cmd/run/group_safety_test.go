package run

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
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

// The revoke bound is one deadline for all the revoked slots: a
// time.Timer's channel delivers once, so a bound applied slot by slot
// cancelled only the first slot whose drain outlasted it and waited for
// the next without bound, blocking the rebalance past the rebalance
// timeout (the group would then give the slots to another member while
// this one's jobs still run). Here both slot jobs ignore Drain and end only
// when cancelled; stop must cancel both once the bound passed.
func TestGroupRevokeBoundCancelsEverySlot(t *testing.T) {
	t.Parallel()
	m := &member{log: slog.New(slog.DiscardHandler), owned: map[int]bool{0: true, 1: true}, jobs: map[int]*slotJob{}}
	cancelled := map[int]chan struct{}{}
	for s := range 2 {
		done, c := make(chan struct{}), make(chan struct{})
		var once sync.Once
		cancelled[s] = c
		m.jobs[s] = &slotJob{slot: s, done: done, cancel: func() { once.Do(func() { close(c); close(done) }) }}
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		m.stop([]int{0, 1}, false, time.Millisecond, -1)
	}()
	guard := time.NewTimer(30 * time.Second) // a hang guard, not a timing assertion: the bound is 1ms
	defer guard.Stop()
	for s := range 2 {
		select {
		case <-cancelled[s]:
		case <-guard.C:
			t.Fatalf("slot %d's drain was never cancelled after the revoke bound passed (the bound applied to the first "+
				"slot only): the revoke blocks the rebalance without bound", s)
		}
	}
	<-stopped
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

// Every membership error retrying cannot fix ends the member naming the
// key or ACL to change; a retriable one (the client rejoins) does not.
func TestGroupRefusedByGroupClassified(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{}
	cfg.Job.Name, cfg.Kafka.Group, cfg.Job.Instance = "j", "g", "i1"
	m := &member{cfg: cfg, topic: "doris-sink.j.slots"}
	for err, want := range map[error]string{
		kerr.InvalidSessionTimeout:     "kafka.session_timeout",
		kerr.GroupAuthorizationFailed:  "READ on group g",
		kerr.TopicAuthorizationFailed:  "doris-sink.j.slots",
		kerr.InconsistentGroupProtocol: "its own kafka.group",
		kerr.UnsupportedAssignor:       "its own kafka.group",
		kerr.InvalidGroupID:            "kafka.group",
		kerr.FencedInstanceID:          "job.instance i1",
	} {
		got := m.refusedByGroup(fmt.Errorf("join: %w", err))
		if !errors.Is(got, err) || got == nil || !strings.Contains(got.Error(), want) || !strings.Contains(got.Error(), "group g") {
			t.Errorf("refusedByGroup(%v) = %v, want it naming group g and %q", err, got, want)
		}
	}
	for _, err := range []error{kerr.RebalanceInProgress, kerr.CoordinatorNotAvailable, kerr.NotCoordinator, kerr.UnknownMemberID} {
		if got := m.refusedByGroup(err); got != nil {
			t.Errorf("refusedByGroup(%v) = %v, want nil (the client retries it)", err, got)
		}
	}
}

// A slot whose decision was refused for a generation the member has not
// moved past is suspended (its job dropped, not rebuilt), and a member
// whose every owned slot is suspended is not ready; a slot no longer owned
// is dropped without suspension.
func TestGroupSuspendedSlotClearsReadiness(t *testing.T) {
	t.Parallel()
	var ready []bool
	m := &member{log: slog.New(slog.DiscardHandler), gen: 3, owned: map[int]bool{0: true, 1: false},
		jobs: map[int]*slotJob{}, suspended: map[int]int32{}, rebuilds: map[int]int{},
		ready: func(r bool) { ready = append(ready, r) }}
	for s := range 2 {
		m.jobs[s] = &slotJob{slot: s, done: make(chan struct{}), drainCh: make(chan struct{})}
	}
	refused := &coordlog.GenerationError{Job: "j", Scope: "1", Stamp: coordlog.GroupStamp{MemberID: "m", Generation: 3}}
	m.suspend(m.jobs[1], m.refusedGeneration(refused), refused, m.log)
	if _, ok := m.suspended[1]; ok || m.jobs[1] != nil {
		t.Errorf("slot 1 (not owned) suspended %v, job %v: want it dropped", m.suspended, m.jobs[1])
	}
	if len(ready) != 0 {
		t.Errorf("readiness changed %v while slot 0 still runs", ready)
	}
	m.suspend(m.jobs[0], m.refusedGeneration(refused), refused, m.log)
	if g, ok := m.suspended[0]; !ok || g != 3 || m.jobs[0] != nil {
		t.Errorf("slot 0 refused at generation 3 (the member's): suspended %v, job %v; want suspended at 3, no job", m.suspended, m.jobs[0])
	}
	if len(ready) != 1 || ready[0] {
		t.Errorf("readiness %v after every owned slot was suspended, want [false]", ready)
	}
}

// A cancelled slot job may ignore its cancellation for a while (its
// loader's Close aborts or commits under a close budget of its own, up to
// 30 s by default; a Kafka abort under its own): the hand-over used to
// wait for it without limit after the drain bound, so the revoke callback
// outlasted the rebalance timeout and the group stalled (issue 29, soak
// seed 20260601 cycle 68). stop now waits at most its grace; the job is
// left to end on its own, and its slot is no longer owned, so the stamp
// refuses any decision it would still begin. The job here ignores
// cancellation until the test releases it, after stop returned; the guard
// is a hang guard, not a timing assertion.
func TestGroupRevokeDoesNotWaitForAJobIgnoringCancellation(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{}
	cfg.Job.Name, cfg.Kafka.Group = "j", "g"
	m := &member{cfg: cfg, log: slog.New(slog.DiscardHandler), owned: map[int]bool{0: true, 1: true}, jobs: map[int]*slotJob{},
		suspended: map[int]int32{}, rebuilds: map[int]int{}}
	release := make(chan struct{})
	var decidedAfter []error
	ended := make(chan struct{})
	cancelled := make(chan struct{})
	// Slot 0 ignores its cancellation: it ends only once released, and
	// then tries to decide (the membership check of its commit).
	stuck := &slotJob{slot: 0, done: make(chan struct{})}
	var once sync.Once
	stuck.cancel = func() { once.Do(func() { close(cancelled) }) }
	go func() {
		defer close(ended)
		defer close(stuck.done)
		<-cancelled
		<-release
		_, err := m.stamp(0)()
		decidedAfter = append(decidedAfter, err)
	}()
	m.jobs[0] = stuck
	// Slot 1 ends at once when cancelled.
	quick := &slotJob{slot: 1, done: make(chan struct{})}
	var once1 sync.Once
	quick.cancel = func() { once1.Do(func() { close(quick.done) }) }
	m.jobs[1] = quick
	stopped := make(chan []int)
	go func() { stopped <- m.stop([]int{0, 1}, false, time.Millisecond, time.Millisecond) }()
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	select {
	case cut := <-stopped:
		if len(cut) != 2 {
			t.Errorf("cut slots = %v, want [0 1] (both drains outlasted the 1ms bound)", cut)
		}
	case <-guard.C:
		// The stuck job stays unreleased: it still owns the slot.
		t.Fatal("the hand-over waits without limit for a cancelled slot job that ignores its cancellation: the " +
			"revoke callback outlasts the rebalance timeout")
	}
	m.mu.Lock()
	owned0, job0, owned1 := m.owned[0], m.jobs[0], m.owned[1]
	m.mu.Unlock()
	if owned0 || owned1 || job0 != nil {
		t.Errorf("after the hand-over: owned[0]=%v owned[1]=%v jobs[0]=%v, want both slots not owned and no job", owned0, owned1, job0)
	}
	select {
	case <-stuck.done:
		t.Fatal("the stuck slot job ended before it was released: the test does not exercise the grace")
	default:
	}
	close(release)
	<-ended
	if len(decidedAfter) != 1 || !errors.Is(decidedAfter[0], kafka.ErrNotOwner) {
		t.Errorf("decision begun by the left-behind job after the hand-over: membership check = %v, want a refusal "+
			"(kafka.ErrNotOwner: the slot is not owned)", decidedAfter)
	}
}
