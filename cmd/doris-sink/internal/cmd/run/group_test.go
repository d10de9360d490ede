package run

import (
	"testing"
)

// Two members of one job config (job.slots 4, 8 partitions) share the
// slots two each through the consumer group; both decide checkpoints of
// their own slots' partitions; every record is loaded exactly once.
func TestGroupTwoMembersShareSlots(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 8, 4)
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 4})
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{a: 2, b: 2})
	e.produce(200)
	e.waitAllDecided()
	e.mu.Lock()
	_, per := e.decidedLocked()
	e.mu.Unlock()
	if per["a"] == 0 || per["b"] == 0 {
		t.Errorf("checkpoints decided per member %v, want both to decide", per)
	}
	for _, m := range []*groupMember{a, b} {
		if err := e.stop(m); err != nil {
			t.Fatalf("member %s: %v", m.name, err)
		}
	}
	e.checkExactlyOnce()
}
