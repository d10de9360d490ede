package loader

import (
	"testing"
	"time"
)

// The K controller (autoK) on synthetic measurements: no clock, no
// emulator. A BE takes at most perLoad bytes/s per Stream Load; the
// source offers offered bytes/s; a checkpoint lasts one second.
func TestAutoKFollowsTheBottleneck(t *testing.T) {
	t.Parallel()
	const perLoad = 16e6
	// measure models one 1 s checkpoint at K with the source offering
	// offered bytes/s: the loads carry min(offered, K × perLoad), and the
	// writer waits for the rest of the second when they are the bound.
	measure := func(k int, offered float64) loadMeasure {
		carried := min(offered, float64(k)*perLoad)
		busy := carried / offered // share of the second the writer spends producing
		return loadMeasure{bytes: int64(carried), blocked: time.Duration((1 - busy) * float64(time.Second)), wall: time.Second}
	}
	a := &autoK{k: 1, min: 1, max: 8}
	steps := func(offered float64, n int) []int {
		var ks []int
		for range n {
			ks = append(ks, a.next(measure(a.k, offered)))
		}
		return ks
	}
	// 100 MB/s offered: 1 → 2 → 4 → 8 (16 MB/s per load: 7 loads needed),
	// then it stays at the cap.
	if got := steps(100e6, 5); !equalInts(got, []int{2, 4, 8, 8, 8}) {
		t.Fatalf("100 MB/s offered: K %v, want [2 4 8 8 8]", got)
	}
	if a.perLoad < perLoad*0.99 || a.perLoad > perLoad*1.01 {
		t.Fatalf("capacity estimate %.0f B/s, want about %.0f", a.perLoad, perLoad)
	}
	// The source slows to 20 MB/s: 8 loads are idle; halve while K/2 at
	// 16 MB/s stays at most 40 % busy: 8 → 4 (4 × 16 × 0.4 = 25.6 ≥ 20),
	// then 4 stays (2 × 16 × 0.4 = 12.8 < 20): no flapping.
	if got := steps(20e6, 4); !equalInts(got, []int{4, 4, 4, 4}) {
		t.Fatalf("20 MB/s offered: K %v, want [4 4 4 4]", got)
	}
	// Idle source: 4 → 2 → 1 and it stays at the floor.
	if got := steps(1e6, 4); !equalInts(got, []int{2, 1, 1, 1}) {
		t.Fatalf("1 MB/s offered: K %v, want [2 1 1 1]", got)
	}
}

// When the sink's CPU, not the loads, bounds the checkpoint (the writer is
// rarely blocked) K is never raised: more loads would not help.
func TestAutoKStaysWhenTheLoadsAreNotTheBound(t *testing.T) {
	t.Parallel()
	a := &autoK{k: 1, min: 1, max: 8}
	for range 5 {
		if k := a.next(loadMeasure{bytes: 300e6, blocked: 100 * time.Millisecond, wall: time.Second}); k != 1 {
			t.Fatalf("K %d after a checkpoint blocked 10 %% of the time, want 1", k)
		}
	}
	if a.perLoad != 0 {
		t.Fatalf("capacity estimate %v without a bottleneck", a.perLoad)
	}
}

// A checkpoint that wrote no row of the table, or whose wall time cannot
// be measured (a stopped test clock), changes nothing; the minimum is a
// floor and the maximum a ceiling.
func TestAutoKEdges(t *testing.T) {
	t.Parallel()
	a := &autoK{k: 2, min: 2, max: 4, perLoad: 1e6}
	for _, m := range []loadMeasure{{}, {bytes: 10, wall: 0}, {bytes: 0, wall: time.Second}} {
		if k := a.next(m); k != 2 {
			t.Fatalf("measure %+v: K %d, want 2", m, k)
		}
	}
	if k := a.next(loadMeasure{bytes: 1, wall: time.Second}); k != 2 {
		t.Fatalf("idle at the minimum: K %d, want 2", k)
	}
	blocked := loadMeasure{bytes: 1e6, blocked: 900 * time.Millisecond, wall: time.Second}
	a.next(blocked)
	if k := a.next(blocked); k != 4 {
		t.Fatalf("blocked at the maximum: K %d, want 4", k)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
