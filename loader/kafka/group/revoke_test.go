package group

import (
	"log/slog"
	"sync"
	"testing"
	"time"
)

// The revoke bound is one deadline for all the revoked slots: a
// time.Timer's channel delivers once, so a bound applied slot by slot
// cancelled only the first slot whose drain outlasted it and waited for
// the next without bound, blocking the rebalance past the rebalance
// timeout (the group would then give the slots to another member while
// this one's jobs still run). Here both slot jobs ignore Drain and end only
// when cancelled; stop must cancel both once the bound passed.
func TestGroupRevokeBoundCancelsEverySlot(t *testing.T) {
	t.Parallel()
	m := &Member{log: slog.New(slog.DiscardHandler), owned: map[int]bool{0: true, 1: true}, jobs: map[int]*slotJob{}}
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
