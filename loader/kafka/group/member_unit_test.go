package group

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Every membership error retrying cannot fix ends the member naming the
// key or ACL to change; a retriable one (the client rejoins) does not.
func TestGroupRefusedByGroupClassified(t *testing.T) {
	t.Parallel()
	m := &Member{cfg: Config{Job: "j", Group: "g", InstanceID: "i1"}, topic: "doris-sink.j.slots"}
	for err, want := range map[error]string{
		kerr.InvalidSessionTimeout:     "kafka.session_timeout",
		kerr.GroupAuthorizationFailed:  "READ on group g",
		kerr.TopicAuthorizationFailed:  "doris-sink.j.slots",
		kerr.InconsistentGroupProtocol: "its own kafka.group",
		kerr.UnsupportedAssignor:       "its own kafka.group",
		kerr.InvalidGroupID:            "kafka.group",
		kerr.FencedInstanceID:          "instance id i1",
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
	m := &Member{log: slog.New(slog.DiscardHandler), gen: 3, owned: map[int]bool{0: true, 1: false},
		jobs: map[int]*slotJob{}, suspended: map[int]int32{}, rebuilds: map[int]int{},
		hooks: Hooks{Ready: func(r bool) { ready = append(ready, r) }}}
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
	m := &Member{cfg: Config{Job: "j", Group: "g"}, log: slog.New(slog.DiscardHandler), owned: map[int]bool{0: true, 1: true}, jobs: map[int]*slotJob{},
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
