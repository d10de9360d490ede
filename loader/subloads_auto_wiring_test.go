package loader_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// doris.sub_loads: auto (Config.SubLoadsAuto): K starts at 1, doubles after
// a checkpoint whose writer was blocked on the loads (here forced by the
// MeasureSubLoads knob: no timing), up to SubLoadsMax, and halves after an
// idle one; it changes only between checkpoints, each decision records
// the K its checkpoint had, and every row lands once.
func TestSubLoadsAutoChangesKAtCheckpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	// Checkpoints 1–3 blocked 90 % of a second, then idle (1 KB/s).
	blocked := map[uint64]bool{1: true, 2: true, 3: true}
	var seen []int
	knobs := &loader.TestingKnobs{MeasureSubLoads: func(id uint64, table string, k int, m loader.SubLoadsMeasure) loader.SubLoadsMeasure {
		seen = append(seen, k)
		if m.Bytes <= 0 {
			t.Errorf("checkpoint %d: measured %d bytes", id, m.Bytes)
		}
		if blocked[id] {
			return loader.SubLoadsMeasure{Bytes: 64e6, Blocked: 900 * time.Millisecond, Wall: time.Second}
		}
		return loader.SubLoadsMeasure{Bytes: 1e3, Wall: time.Second}
	}}
	l := e.open(func(c *loader.Config) { c.SubLoadsAuto, c.SubLoadsMax, c.Knobs = true, 4, knobs })
	defer l.Close(ctx)
	if _, err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	const per, checkpoints = 8, 6
	for n := range checkpoints {
		for i := n * per; i < (n+1)*per; i++ {
			if err := l.WriteKey(ctx, uint64(i%8), row(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Checkpoint(ctx, pos((n+1)*per)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// K per checkpoint: 1, 2, 4 (blocked: doubled), 4 (blocked at the
	// cap), then idle: 2, 1.
	want := []int{1, 2, 4, 4, 2, 1}
	if !slices.Equal(seen, want) {
		t.Fatalf("K measured per checkpoint %v, want %v", seen, want)
	}
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	decisions := append(slices.Clone(st.History), *st.Decided)
	if len(decisions) != checkpoints {
		t.Fatalf("%d decisions, want %d", len(decisions), checkpoints)
	}
	for i, d := range decisions {
		if got := len(d.Txns); got != want[i] {
			t.Errorf("decision %d: %d txns, want K = %d", d.ID, got, want[i])
		}
		if got := max(d.SubLoads(testDB+"."+e.table), 1); got != want[i] {
			t.Errorf("decision %d records K %d, want %d", d.ID, got, want[i])
		}
	}
	e.checkExactlyOnce(per * checkpoints)
}

// SubLoadsMax below SubLoads (the starting K) is refused.
func TestSubLoadsAutoConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := e.config(func(c *loader.Config) { c.SubLoads, c.SubLoadsMax, c.SubLoadsAuto = 4, 2, true })
	defer cfg.Store.Close()
	if _, err := loader.New(e.client, cfg); err == nil {
		t.Fatal("SubLoadsMax 2 below SubLoads 4 accepted")
	}
}

// A crash at every failpoint while doris.sub_loads: auto is raising K
// (forced by the knob: every checkpoint blocked, K 1 → 2 → 4 over five
// tables; the once-per-checkpoint failpoints with skip 2 and 4 crash in
// checkpoints 3 and 5, at K = 4), then a restart (auto again, K back at 1,
// Recover and heals using each decision's own K), leaves every row
// exactly once and every decision valid.
func TestSubLoadsAutoCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	const n, every = 30, 6
	auto := func(c *loader.Config) {
		c.SubLoadsAuto, c.SubLoadsMax = true, 4
		c.Knobs = &loader.TestingKnobs{MeasureSubLoads: func(uint64, string, int, loader.SubLoadsMeasure) loader.SubLoadsMeasure {
			return loader.SubLoadsMeasure{Bytes: 1e6, Blocked: 900 * time.Millisecond, Wall: time.Second}
		}}
	}
	for _, fp := range loader.AllFailpoints {
		for _, skip := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/skip%d", fp, skip), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e := newMultiEnv(t)
				fps := loader.NewFailpoints()
				h, err := fps.Arm(fp, loader.Crash().Skip(skip))
				if err != nil {
					t.Fatal(err)
				}
				e.crashRunSub(ctx, fps, n, every, auto)
				if h.Hits() != 1 {
					t.Fatalf("failpoint %s acted %d times", fp, h.Hits())
				}
				e.runToEndSub(ctx, n, every, auto)
				e.checkMultiExactlyOnce(n)
				st, err := checkpoint.ReadFile(e.dir)
				if err != nil {
					t.Fatal(err)
				}
				if err := st.Validate(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
