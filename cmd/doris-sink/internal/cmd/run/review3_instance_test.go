package run

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Review (issue 12, docs/configuration.md job.instance, design.md §7.2 "A
// member the group refuses"): a second process started with the same
// job.instance fences the first out of the group (kfake groups.go
// validateInstanceID answers the old member FENCED_INSTANCE_ID, as Kafka's
// GroupMetadataManager does for a replaced static member); the first ends
// with *GroupRefusedError naming job.instance, and the second keeps the
// slots and loads everything exactly once. Only the classification was
// unit-tested (TestGroupRefusedByGroupClassified); this is the end-to-end
// promise.
func TestReviewDuplicateInstanceFencesFirstMember(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	a := e.startWith("a", ", instance: dup", "", nil)
	e.ownership(map[*groupMember]int{a: 2})
	e.produce(20)
	e.waitAllDecided()
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	b := e.startWith("b", ", instance: dup", "", nil)
	e.waitUntil("a fenced out of the group", func() bool { return a.ended })
	var gr *GroupRefusedError
	if !errors.As(a.err, &gr) || !errors.Is(a.err, kerr.FencedInstanceID) {
		t.Fatalf("first member with job.instance dup ended with %v, want *GroupRefusedError wrapping FENCED_INSTANCE_ID", a.err)
	}
	e.ownership(map[*groupMember]int{b: 2})
	e.produce(20)
	e.waitAllDecided()
	if err := e.stop(b); err != nil {
		t.Fatalf("member b (the second process with job.instance dup): %v", err)
	}
	e.checkExactlyOnce()
}
