package loader_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// stepClock advances by step on every After (and not otherwise), whatever
// the wait asked for: a retry budget of B then allows exactly B/step+1
// attempts, independent of the backoff jitter and of real time.
type stepClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) After(time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(c.step)
	ch := make(chan time.Time, 1)
	ch <- c.now
	c.mu.Unlock()
	return ch
}

// With the BE down (docs/doris-facts.md §3: the 2PC abort goes to the BE; label
// lookups to the FE), the abort of a failed checkpoint gives up after
// Retry.AbortMaxElapsed (default 10s), not Retry.MaxElapsed (1h here): the
// checkpoint fails promptly and Recover, once the BE is back, aborts the
// label and the job finishes exactly once.
func TestFailedCheckpointAbortBudgetBEDown(t *testing.T) {
	t.Parallel()
	const n, every = 10, 5
	ctx := context.Background()
	e := newEnv(t)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailAfterPrecommit, loader.ReturnError(nil).Times(1)); err != nil {
		t.Fatal(err)
	}
	var recovered []string
	var beDown sync.Once
	clk := &stepClock{now: time.Unix(1_700_000_000, 0), step: time.Second}
	l := e.open(func(c *loader.Config) {
		c.Clock = clk
		c.Retry.MaxElapsed = time.Hour
		c.Retry.AbortMaxElapsed = 0 // the default
		c.Failpoints = fps
		c.Knobs = &loader.TestingKnobs{
			AfterPrecommit: func(uint64, *doris.LoadResult) { beDown.Do(e.srv.BEDown) },
			AfterRecoverLabel: func(lbl string, st doris.TxnStatus, action string) {
				recovered = append(recovered, string(st)+":"+action)
			},
		}
	})
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	lookups := e.fault(doristest.Fault{Op: doristest.FaultLoadState, Observe: true, Count: -1})
	err := drive(ctx, l, 0, every, every)
	var ce *loader.CheckpointError
	if !errors.As(err, &ce) || !errors.Is(err, loader.ErrNeedRecover) || !errors.Is(err, loader.ErrInjected) {
		t.Fatalf("checkpoint with the BE down: %v, want a CheckpointError wrapping the injected error", err)
	}
	// One label lookup per abort attempt: attempts at 0s, 1s, …, 10s.
	want := int(loader.DefaultRetryAbortMaxElapsed/clk.step) + 1
	if got := lookups.Hits(); got != want {
		t.Fatalf("abort attempts (label lookups) %d, want %d (Retry.AbortMaxElapsed, not MaxElapsed)", got, want)
	}
	lookups.Remove()
	if err := e.srv.BEUp(); err != nil {
		t.Fatal(err)
	}
	recoverTo(t, ctx, l, 0)
	if len(recovered) != 1 || recovered[0] != "PRECOMMITTED:abort" {
		t.Fatalf("Recover acted %v, want the failed checkpoint's label PRECOMMITTED:abort", recovered)
	}
	e.finish(ctx, l, 0, n, every)
}
