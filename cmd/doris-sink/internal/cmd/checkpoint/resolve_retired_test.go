package checkpoint

import (
	"context"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Issue 12 "Operators": `checkpoint resolve --slot J` on a writer slot
// retired by `checkpoint reslot` (4 → 2: scopes 2 and 3) is refused,
// naming the scope and the job's slot count, and writes no operator record
// (nothing of a retired scope is ever resumed, so a decision for it would
// never be applied); an active slot is still resolvable past the check.
func TestResolveRefusesRetiredSlot(t *testing.T) {
	t.Parallel()
	j := jobtestKafkaFourSlots(t)
	if _, err := reslot(t, j, ReslotRequest{Slots: 2}); err != nil {
		t.Fatal(err)
	}
	before := stateView(t, j).SlotByNumber(3)
	if before == nil || !before.Retired {
		t.Fatalf("scope 3 after the reslot: %+v, want retired", before)
	}
	d := before.State.Decided
	for _, args := range [][]string{{"--slot", "3", "--assume", "aborted", "--yes"}, {"--slot", "3", "--assume", "visible", "--dry-run"}} {
		r := resolve(t, j, d.ID, args...)
		if r.err == nil {
			t.Fatalf("resolve %v on retired scope 3: %+v, want a refusal", args, r.res)
		}
		for _, w := range []string{"writer scope 3 is retired", "2 slots", "checkpoint reslot"} {
			if !strings.Contains(r.err.Error(), w) {
				t.Errorf("resolve %v: %v, want it to say %q", args, r.err, w)
			}
		}
	}
	after := stateView(t, j).SlotByNumber(3)
	if after.Operator != nil || after.Pending {
		t.Errorf("scope 3 after the refused resolve: operator %+v pending %v, want nothing written", after.Operator, after.Pending)
	}
	// Slot 1 is active: resolve gets past the retired check (its decision
	// is committed, so there is nothing to resolve, not a refusal of the
	// scope).
	active := stateView(t, j).SlotByNumber(1)
	r := resolve(t, j, active.State.Decided.ID, "--slot", "1", "--assume", "visible", "--dry-run")
	if r.err != nil && strings.Contains(r.err.Error(), "retired") {
		t.Errorf("resolve on active slot 1 refused as retired: %v", r.err)
	}
}

// jobtestKafkaFourSlots is a Kafka-coordinated job whose 4 slots each
// decided s+1 committed checkpoints, with the slot topic of 4 partitions.
func jobtestKafkaFourSlots(t *testing.T) *jobtest.Job {
	t.Helper()
	j := jobtest.NewKafkaPartitions(t, reslotParts)
	for s := range 4 {
		var ends []map[int32]int64
		for k := range s + 1 {
			ends = append(ends, slotOffsets(s, 4, int64(10*k)))
		}
		j.Decide(s, 4, ends, false)
	}
	if err := setSlotTopic(context.Background(), j.KafkaOpts(), coordlog.SlotTopic(jobtest.Name), -1, 4); err != nil {
		t.Fatal(err)
	}
	return j
}
