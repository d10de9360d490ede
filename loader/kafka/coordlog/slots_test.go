package coordlog

import (
	"errors"
	"strings"
	"testing"
)

// slotStoreConfig is cfg for writer slot j of a job of slots slots.
func slotStoreConfig(cfg StoreConfig, j, slots int) StoreConfig {
	cfg.Owner.Writer = SlotScope(j)
	cfg.Slots = slots
	return cfg
}

// A state record holds the slot count it was written with (absent for a
// standalone job, so S = 1 writes the same document as before); a store
// opened with another count, for its own scope or any other scope of the
// job, is refused with a *SlotsMismatchError naming both counts and the
// reslot command; AnySlots opens it anyway and the next save records the
// new count.
func TestSlotsMismatchRefused(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	base := storeConfig(c, "sl1")

	s0 := mustOpenStore(t, base) // standalone: slots absent
	st, err := s0.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decide(t, st, map[int32]int64{0: 3, 1: 4})
	if err := s0.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	s0.Close()
	sn, err := ReadSnapshot(ctx, "sl1", base.Log.ClientOpts)
	if err != nil {
		t.Fatal(err)
	}
	if rec := sn.Records[RecordKey("sl1", "0")]; strings.Contains(string(rec.Value), `"slots"`) {
		t.Errorf("standalone record holds a slots field: %s", rec.Value)
	}

	// Slot 1 of a 4-slot job: slot 0's record says 1.
	_, err = OpenStore(ctx, slotStoreConfig(base, 1, 4))
	var sm *SlotsMismatchError
	if !errors.As(err, &sm) || sm.Recorded != 1 || sm.Configured != 4 || sm.Scope != "0" {
		t.Fatalf("open slot 1 of 4 over a standalone job: %v, want *SlotsMismatchError 1 vs 4 of scope 0", err)
	}
	for _, want := range []string{"job.slots is 4", "records 1 writer slots", "checkpoint reslot", "--slots 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// The reslot path opens it anyway and records 4.
	r := mustOpenStore(t, func() StoreConfig { c := slotStoreConfig(base, 0, 4); c.AnySlots = true; return c }())
	st, err = r.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Decided.Committed = true
	if err := r.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	r.Close()
	sn, err = ReadSnapshot(ctx, "sl1", base.Log.ClientOpts)
	if err != nil {
		t.Fatal(err)
	}
	_, src, _, err := sn.StateOf("0")
	if err != nil || src.RecordedSlots() != 4 {
		t.Fatalf("slot 0 record after the re-slot: slots %d, %v; want 4", src.RecordedSlots(), err)
	}
	// Now 4 slots open; the standalone (1) and another count (2) are refused.
	mustOpenStore(t, slotStoreConfig(base, 3, 4)).Close()
	for _, n := range []int{0, 2} {
		_, err := OpenStore(ctx, slotStoreConfig(base, 0, n))
		if !errors.As(err, &sm) || sm.Recorded != 4 || sm.Configured != max(n, 1) {
			t.Errorf("open with slots %d over a 4-slot job: %v, want *SlotsMismatchError 4 vs %d", n, err, max(n, 1))
		}
	}
}
