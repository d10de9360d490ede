package loader_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// TestRandomCrashes crashes at seeded random cut points over many cycles,
// sometimes timing out precommitted txns between crash and restart, and
// checks exactly-once at the end. Reproduce with -loader.seed=N or
// LOADER_SEED=N.
func TestRandomCrashes(t *testing.T) {
	t.Parallel()
	seed := testSeed(t)
	t.Logf("seed %d (reproduce: go test ./loader -run TestRandomCrashes -loader.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	ctx := context.Background()
	e := newEnv(t)
	const n = 200
	every := 3 + rng.IntN(6)
	for crash := 0; crash < 25; crash++ {
		fp := loader.AllFailpoints[rng.IntN(len(loader.AllFailpoints))]
		skip := rng.IntN(4)
		if fp == loader.FailBeforeAnnounce {
			skip = 0
		}
		fps := loader.NewFailpoints()
		if _, err := fps.Arm(fp, loader.Crash().Skip(skip)); err != nil {
			t.Fatal(err)
		}
		l := e.open(func(c *loader.Config) { c.Failpoints = fps })
		p, err := l.Recover(ctx)
		if err != nil {
			t.Fatalf("crash %d (%s): recover: %v", crash, fp, err)
		}
		err = drive(ctx, l, next(t, p), n, every)
		l.Close(ctx)
		t.Logf("crash %d at %s (skip %d): %v", crash, fp, skip, err)
		if rng.IntN(4) == 0 {
			e.srv.TimeoutPrecommitted() // doris-api.md §5 precommit timeout while down: healed
		}
	}
	e.runToEnd(ctx, n, every)
	e.checkExactlyOnce(n)
}
