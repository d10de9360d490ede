package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// (issue 12, docs/configuration.md job.instance, design.md §7.2 "A
// member the group refuses"): a second process started with the same
// job.instance fences the first out of the group (kfake groups.go
// validateInstanceID answers the old member FENCED_INSTANCE_ID, as Kafka's
// GroupMetadataManager does for a replaced static member); the first ends
// with *GroupRefusedError naming job.instance, and the second keeps the
// slots and loads everything exactly once. Only the classification was
// unit-tested (TestGroupRefusedByGroupClassified); this is the end-to-end
// promise.
func TestGroupDuplicateInstanceFencesFirstMember(t *testing.T) {
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

// (design.md §7.2 "Layout safety": "a group start over a file store
// in job.data_dir that was never imported is refused (only a standalone
// start imports it)"; group.go checkNoFileStore): the refusal had no test.
// A group member whose job.data_dir holds a file checkpoint store that was
// never imported into Kafka ends before it joins the group, names the
// directory and the way out, and loads nothing.
func TestGroupStartOverUnimportedFileStoreRefused(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	dir := filepath.Join(e.dir, "data-a") // startWith's job.data_dir of member "a"
	fs, err := checkpoint.OpenFile(dir, checkpoint.Owner{Job: groupJob, DB: "demo", Table: "t", Source: "kafka:orders", Writer: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	e.produce(10)
	a := e.start("a", "")
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	e.waitUntil("a refused", func() bool { return a.ended })
	if a.err == nil || !strings.Contains(a.err.Error(), "never imported") || !strings.Contains(a.err.Error(), dir) ||
		!strings.Contains(a.err.Error(), "checkpoint reslot") {
		t.Fatalf("group start over an unimported file store: Run = %v, want a refusal naming %s and the way out", a.err, dir)
	}
	e.mu.Lock()
	assigns := a.assigns
	e.mu.Unlock()
	if assigns != 0 {
		t.Errorf("the refused member was assigned slots %d times, want it refused before it joins", assigns)
	}
	rows, err := e.srv.Rows("demo", "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 {
		t.Errorf("%d rows loaded by a refused member, want 0", len(rows))
	}
}

// (design.md §7.2 "Terminal errors": "SIGTERM drains every slot
// job, then leaves the group (a static member does not leave: its slots
// stay with its instance id until the session timeout)"; franz-go
// consumer_group.go leave: a static member sends no LeaveGroup unless it
// owes a cooperative rejoin). Pinned here because docs/operations.md
// "Removing a member" says the others take its slots "at once", which
// holds only without job.instance: a static member's SIGTERM sends no
// LeaveGroup, and its slots reach the other member only after
// kafka.session_timeout.
func TestGroupStaticMemberSigtermDoesNotLeave(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	var mu sync.Mutex
	var leaves []string
	e.kc.ControlKey(int16(kmsg.LeaveGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		e.kc.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		for _, m := range req.(*kmsg.LeaveGroupRequest).Members {
			leaves = append(leaves, fmt.Sprint(m.MemberID, "/", m.InstanceID != nil))
		}
		return nil, nil, false
	})
	a := e.startWith("a", ", instance: ia", "", nil)
	e.ownership(map[*groupMember]int{a: 2})
	b := e.start("b", "")
	e.ownership(map[*groupMember]int{a: 1, b: 1})
	e.produce(20)
	e.waitAllDecided()
	mu.Lock()
	leaves = nil // b's join may have made a revoke; count only what a's stop sends
	mu.Unlock()
	if err := e.stop(a); err != nil {
		t.Fatalf("SIGTERM of static member a: %v", err)
	}
	mu.Lock()
	got := append([]string(nil), leaves...)
	mu.Unlock()
	if len(got) != 0 {
		t.Errorf("static member a sent LeaveGroup %v on SIGTERM; design.md §7.2 says it does not leave", got)
	}
	e.ownership(map[*groupMember]int{b: 2}) // after the session timeout
	e.produce(20)
	e.waitAllDecided()
	if err := e.stop(b); err != nil {
		t.Fatalf("member b: %v", err)
	}
	e.checkExactlyOnce()
}

// In group mode a SIGTERM drain is bounded by kafka.rebalance_timeout
// (group.go drainBound): a slot job still draining then is cancelled with
// its checkpoint undecided. Exactly-once holds (the slot's next owner
// aborts it), but the member must not exit 0 claiming it drained: it
// returns *DrainCutError naming the slot (docs/operations.md "Signals": a
// drain that cannot finish exits 1 and says so).
func TestGroupSigtermDrainCutAtBoundIsNotReportedDrained(t *testing.T) {
	t.Parallel()
	e := newGroupEnv(t, 4, 2)
	e.rebalance = "2s"
	a := e.start("a", "")
	e.ownership(map[*groupMember]int{a: 2})
	e.waitUntil("both slot jobs running", func() bool { return a.starts == 2 })
	hold, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Block: true, Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Release()
	defer hold.Remove()
	e.produce(20)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hold.Wait(ctx, 1); err != nil {
		t.Fatalf("no precommit reached Doris: %v", err)
	}
	e.mu.Lock()
	a.mayFail = true
	e.mu.Unlock()
	a.sigs <- syscall.SIGTERM // one signal: drain; the held precommit outlasts the bound
	var runErr error
	select {
	case runErr = <-a.done:
	case <-ctx.Done():
		t.Fatal("member a did not end after SIGTERM")
	}
	var cut *DrainCutError
	if !errors.As(runErr, &cut) || len(cut.Slots) == 0 {
		t.Errorf("SIGTERM drain cut at the rebalance-timeout bound (an open checkpoint left undecided) ended with %v; "+
			"want *DrainCutError naming the undecided slot, as a standalone drain that cannot finish exits 1", runErr)
	}
}
