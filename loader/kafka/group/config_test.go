package group

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// New names every required Config field that is missing, and a slot count
// below 1; a valid Config gives a member that runs once.
func TestNewNamesMissingFields(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Job: "j"})
	for _, f := range []string{"Group", "InstanceID", "ClientOpts", "NewSlotJob"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("New without %s: %v, want an error naming it", f, err)
		}
	}
	factory := func(context.Context, Slot) (SlotJob, error) { return nil, nil }
	ok := Config{Job: "j", Group: "g", InstanceID: "i", ClientOpts: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, NewSlotJob: factory}
	bad := ok
	bad.Slots = 0
	if _, err := New(bad); err == nil || !strings.Contains(err.Error(), "Slots 0") {
		t.Errorf("New with Slots 0: %v, want an error naming Slots", err)
	}
	ok.Slots = 2
	m, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if o := m.Ownership(); len(o.Owned) != 0 || o.Generation != -1 || o.MemberID != "" {
		t.Errorf("ownership before Run = %+v, want nothing owned, generation -1", o)
	}
	m.Drain() // before it joined: Run reads nothing and returns nil
	if err := m.Run(context.Background()); err != nil {
		t.Errorf("Run after Drain = %v, want nil (nothing read)", err)
	}
	if err := m.Run(context.Background()); err == nil {
		t.Error("a second Run: want an error")
	}
}

// ReadView without Kafka (no client) still lays out the recorded slots and
// positions: owners and log ends unknown, every partition under the slot
// coordlog.SlotOf gives it, the caller's errors first.
func TestReadViewWithoutKafka(t *testing.T) {
	t.Parallel()
	src := ViewSource{Job: "j", ConsumerGroup: "g", Slots: 2, Grouped: true, Errors: []string{"kafka client: refused"},
		Recorded:  []RecordedSlot{{Slot: 1, Scope: "1", Checkpoint: 7, Label: "l7", Committed: true, NextID: 8}},
		Positions: map[string]map[int32]RecordedPosition{"orders": {0: {Next: 10, Checkpoint: 3}, 1: {Next: 20, Checkpoint: 7}}}}
	v := ReadView(context.Background(), nil, src)
	if v.Slots != 2 || len(v.SlotViews) != 2 || len(v.Partitions) != 2 || len(v.Errors) != 1 {
		t.Fatalf("view %+v: want 2 slots, 2 partitions, the caller's error", v)
	}
	if s := v.SlotViews[1]; s.Checkpoint != 7 || s.Label != "l7" || !s.Committed || s.NextID != 8 || s.OwnerText != OwnerStopped {
		t.Errorf("slot 1 view %+v: want its recorded decision, owner %q", s, OwnerStopped)
	}
	for _, p := range v.Partitions {
		if p.Position == nil || p.LogEnd != nil || p.Lag != nil {
			t.Errorf("partition %+v: want its recorded position, log end and lag unknown", p)
		}
	}
}
