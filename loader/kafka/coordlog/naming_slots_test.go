package coordlog

import "testing"

// SlotOf is deterministic, in range, and spreads one topic's partitions
// round the slots (consecutive partitions go to consecutive slots).
func TestSlotOf(t *testing.T) {
	for _, slots := range []int{0, 1} {
		if s := SlotOf("orders", 7, slots); s != 0 {
			t.Errorf("SlotOf(orders, 7, %d) = %d, want 0", slots, s)
		}
	}
	seen := map[int]int{}
	first := SlotOf("orders", 0, 4)
	for p := int32(0); p < 8; p++ {
		s := SlotOf("orders", p, 4)
		if s < 0 || s >= 4 {
			t.Fatalf("SlotOf(orders, %d, 4) = %d, out of [0, 4)", p, s)
		}
		if want := (first + int(p)) % 4; s != want {
			t.Errorf("SlotOf(orders, %d, 4) = %d, want %d", p, s, want)
		}
		seen[s]++
	}
	for s := 0; s < 4; s++ {
		if seen[s] != 2 {
			t.Errorf("slot %d owns %d of 8 partitions, want 2", s, seen[s])
		}
	}
	if got := SlotOf("orders", 3, 1); got != 0 {
		t.Errorf("SlotOf(orders, 3, 1) = %d, want 0 (one slot owns everything)", got)
	}
	if got := SlotScope(0); got != DefaultScope {
		t.Errorf("SlotScope(0) = %q, want %q", got, DefaultScope)
	}
	if got := SlotScope(12); got != "12" {
		t.Errorf("SlotScope(12) = %q", got)
	}
	if got := SlotTopic("orders-eos"); got != "doris-sink.slots.orders-eos" {
		t.Errorf("SlotTopic = %q", got)
	}
}
