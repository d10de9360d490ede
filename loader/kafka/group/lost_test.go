package group

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// fakeSlotJob registers on m a slot job of slot s that runs until its
// context is cancelled or it is asked to drain (as a slot job's Run
// does), and returns its context.
func fakeSlotJob(m *Member, s int) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sj := &slotJob{slot: s, cancel: cancel, done: make(chan struct{}), drainCh: make(chan struct{})}
	m.owned[s] = true
	m.jobs[s] = sj
	go func() {
		defer close(sj.done)
		select { // a drain ends the job as a finished checkpoint would
		case <-ctx.Done():
		case <-sj.drainCh:
		}
	}()
	return ctx
}

// Issue 12 / docs/design.md §7.2: OnPartitionsLost (the member's session
// expired or it was fenced out of the group: the slots already belong to
// another member) cancels the lost slots' jobs at once without asking
// them to drain (a drain would precommit and decide a checkpoint for a
// slot the member no longer owns), marks the slots not owned, clears the
// process's readiness and reports them revoked; a slot it did not lose
// keeps running. The contrast: OnPartitionsRevoked drains first.
func TestGroupLostCancelsWithoutDecidingAndClearsReadiness(t *testing.T) {
	t.Parallel()
	var readiness []bool
	var revoked [][]int
	m := &Member{log: slog.New(slog.NewTextHandler(io.Discard, nil)), topic: coordlog.SlotTopic("grp"), slots: 4,
		owned: map[int]bool{}, jobs: map[int]*slotJob{}, suspended: map[int]int32{}, rebuilds: map[int]int{},
		hooks: Hooks{Ready: func(r bool) { readiness = append(readiness, r) },
			Revoked: func(s []int) { revoked = append(revoked, s) }}}
	ctxs := map[int]context.Context{}
	for s := range 3 {
		ctxs[s] = fakeSlotJob(m, s)
	}
	drainChs := map[int]chan struct{}{}
	for s, sj := range m.jobs {
		drainChs[s] = sj.drainCh
	}
	m.lost(context.Background(), nil, map[string][]int32{m.topic: {2, 0}, "other": {1}})

	for _, s := range []int{0, 2} {
		if ctxs[s].Err() == nil {
			t.Errorf("slot %d: job not cancelled on lost", s)
		}
		select {
		case <-drainChs[s]:
			t.Errorf("slot %d: the lost slot's job was asked to drain (it would decide for a slot the member lost)", s)
		default:
		}
		if m.owned[s] || m.jobs[s] != nil {
			t.Errorf("slot %d: owned %v job %v after lost, want neither", s, m.owned[s], m.jobs[s])
		}
	}
	if ctxs[1].Err() != nil || !m.owned[1] || m.jobs[1] == nil {
		t.Errorf("slot 1 (not lost): cancelled %v owned %v job %v, want it left running", ctxs[1].Err() != nil, m.owned[1], m.jobs[1])
	}
	if !slices.Equal(readiness, []bool{false}) {
		t.Errorf("readiness calls %v, want [false]", readiness)
	}
	if len(revoked) != 1 || !slices.Equal(revoked[0], []int{0, 2}) {
		t.Errorf("revoked %v, want [[0 2]]", revoked)
	}

	// Revoked (a cooperative hand-over) asks slot 1 to drain (its job ends
	// on its own) and leaves readiness alone.
	m.revoked(context.Background(), nil, map[string][]int32{m.topic: {1}})
	select {
	case <-drainChs[1]:
	default:
		t.Error("slot 1: a revoked slot's job was not asked to drain")
	}
	if m.owned[1] || m.jobs[1] != nil {
		t.Errorf("slot 1 after revoked: owned %v job %v, want neither", m.owned[1], m.jobs[1])
	}
	if len(readiness) != 1 {
		t.Errorf("readiness calls %v after a revoke, want still [false]", readiness)
	}
}
