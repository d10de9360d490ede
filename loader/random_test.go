package loader_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// randomFaults are the emulator faults TestRandomCrashes draws from
// (docs/doris-facts.md §2, §3, §6.1: lost answers, refusals, failed loads).
var randomFaults = []doristest.Fault{
	{Op: doristest.FaultCommit, Refuse: true},
	{Op: doristest.FaultCommit, ApplyThenDrop: true},
	{Op: doristest.FaultCommit, Err: &doristest.FaultErr{Message: "injected commit failure"}},
	{Op: doristest.FaultPrecommit, ApplyThenDrop: true},
	{Op: doristest.FaultPrecommit, Refuse: true},
	{Op: doristest.FaultPrecommit, Err: &doristest.FaultErr{Message: "injected precommit failure"}},
	{Op: doristest.FaultBegin, Err: &doristest.FaultErr{Message: "injected begin failure"}},
	{Op: doristest.FaultStream, Err: &doristest.FaultErr{Message: "injected stream failure"}},
	{Op: doristest.FaultStream, Refuse: true},
	{Op: doristest.FaultAbort, Refuse: true},
	{Op: doristest.FaultLoadState, Err: &doristest.FaultErr{Message: "injected lookup failure"}},
}

// TestRandomCrashes runs seeded random rounds over one store and emulator.
// Every round arms one failpoint with a crash or an error action (each
// failpoint × action pair is drawn once per run, in random order, with a
// random skip), installs a random emulator fault in about half of them, and
// sometimes times out precommitted txns between rounds (docs/doris-facts.md §5,
// healed). Errors are recovered in process; a crash ends the round and a
// new loader reopens the store. At the end the table must hold the source
// exactly once. Reproduce with -loader.seed=N or LOADER_SEED=N (the
// background commit races the next checkpoint's stream, so a seed fixes
// the schedule, not every interleaving).
func TestRandomCrashes(t *testing.T) {
	t.Parallel()
	seed := testSeed(t)
	t.Logf("seed %d (reproduce: go test ./loader -run TestRandomCrashes -loader.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	ctx := context.Background()
	e := newEnv(t)
	every := 3 + rng.IntN(6)
	type round struct {
		fp    string
		crash bool
	}
	var rounds []round
	for _, fp := range loader.AllFailpoints {
		rounds = append(rounds, round{fp, true}, round{fp, false})
	}
	rng.Shuffle(len(rounds), func(i, j int) { rounds[i], rounds[j] = rounds[j], rounds[i] })
	span := 5 * every // records each round tries to load: enough cycles to pass every skip
	n := span * len(rounds)
	acted, crashed, faultHits := 0, 0, 0
	for i, r := range rounds {
		skip := rng.IntN(3)
		if r.fp == loader.FailBeforeAnnounce {
			skip = 0 // passed once per Recover
		}
		act := loader.ReturnError(nil).Times(1 + rng.IntN(2))
		if r.crash {
			act = loader.Crash()
		}
		fps := loader.NewFailpoints()
		h, err := fps.Arm(r.fp, act.Skip(skip))
		if err != nil {
			t.Fatal(err)
		}
		var fh *doristest.FaultHandle
		if rng.IntN(2) == 0 {
			f := randomFaults[rng.IntN(len(randomFaults))]
			f.Count = 1 + rng.IntN(2)
			fh = e.fault(f)
		}
		l := e.open(func(c *loader.Config) { c.Failpoints = fps })
		end := 0
		for rec := 0; ; rec++ {
			if rec > 10 {
				t.Fatalf("round %d (%s %v): no progress after 10 in-process recoveries", i, r.fp, act)
			}
			p, err := l.Recover(ctx)
			if err != nil {
				t.Fatalf("round %d (%s %v): recover: %v", i, r.fp, act, err)
			}
			from := next(t, p)
			end = min(n, max(end, from+span))
			err = drive(ctx, l, from, end, every)
			if err == nil || errors.Is(err, loader.ErrCrashed) {
				break
			}
			if !errors.Is(err, loader.ErrNeedRecover) {
				t.Fatalf("round %d (%s %v): drive: %v", i, r.fp, act, err)
			}
		}
		cerr := l.Close(ctx)
		if r.crash && h.Hits() > 0 {
			crashed++
			if !errors.Is(cerr, loader.ErrCrashed) {
				t.Errorf("round %d: crashed at %s, but close: %v", i, r.fp, cerr)
			}
		}
		acted += min(h.Hits(), 1)
		if fh != nil {
			faultHits += fh.Hits()
			fh.Remove()
		}
		t.Logf("round %d: %s=%v acted %d, fault %v, close: %v", i, r.fp, act, h.Hits(), fh != nil, cerr)
		if rng.IntN(4) == 0 {
			e.srv.TimeoutPrecommitted() // docs/doris-facts.md §5 precommit timeout while down: healed
		}
	}
	t.Logf("%d of %d failpoints acted (%d crashes), emulator faults hit %d times", acted, len(rounds), crashed, faultHits)
	// A round ends when its records are loaded; a late round may run out
	// of records before its skip is passed. All others must act.
	if acted < len(rounds)-2 {
		t.Errorf("only %d of %d armed failpoints acted: the rounds do not reach the cut points", acted, len(rounds))
	}
	e.runToEnd(ctx, n, every)
	e.checkExactlyOnce(n)
}
