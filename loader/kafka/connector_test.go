package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

func TestEndToEndDrain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	const n = 100
	e.produceIDs(0, n, 3)
	var rec recorder
	c := e.connector(e.config(), nil, WithOnCheckpoint(rec.add))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(n)
	st := rec.stats()
	if len(st) < n/7 {
		t.Fatalf("%d checkpoints, want at least %d (row cap 7)", len(st), n/7)
	}
	last := st[len(st)-1]
	if want := e.end(testTopic); !covers(last.End, want) {
		t.Fatalf("last checkpoint ends at %v, want %v", last.End, want)
	}
	for i := 1; i < len(st); i++ {
		if mustJSON(t, st[i].Start) != mustJSON(t, st[i-1].End) {
			t.Fatalf("checkpoint %d starts at %v, previous ended at %v", i, st[i].Start, st[i-1].End)
		}
	}
	m := c.Metrics()
	if m.Records.Load() != n || m.Rows.Load() != n || m.Checkpoints.Load() != int64(len(st)) {
		t.Fatalf("metrics records=%d rows=%d checkpoints=%d", m.Records.Load(), m.Rows.Load(), m.Checkpoints.Load())
	}

	// A restart on the same store resumes at the end: more records are
	// loaded once, the first ones are not read again.
	e.produceIDs(n, n+20, 3)
	c2 := e.connector(e.config(), nil)
	var start Position
	c2.knobs.AfterStart = func(p Position) { start = p }
	if err := e.runToEnd(ctxFor(t), c2); err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if mustJSON(t, start) != mustJSON(t, last.End) {
		t.Fatalf("restart began at %v, want the last decided position %v", start, last.End)
	}
	e.checkExactlyOnce(n + 20)
	if got := c2.Metrics().Records.Load(); got != 20 {
		t.Fatalf("restart read %d records, want 20", got)
	}
}

// TestCrashRestart crashes the loader at a cut point (docs/design.md §2) during
// the third checkpoint, then a new Connector and Loader on the same store
// dir and emulator resume: no loss, no duplicates.
func TestCrashRestart(t *testing.T) {
	t.Parallel()
	for _, fp := range []string{loader.FailMidStream, loader.FailAfterPrecommit, loader.FailBeforeDecide,
		loader.FailAfterDecide, loader.FailMidCommit} {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 3)
			const n = 60
			e.produceIDs(0, n, 3)
			fps := loader.NewFailpoints()
			var h *loader.Handle
			var decided int
			c := e.connector(e.config(), fps, WithOnCheckpoint(func(s CheckpointStats) {
				if s.Err == nil {
					if decided++; decided == 2 {
						var err error
						if h, err = fps.Arm(fp, loader.Crash()); err != nil {
							t.Error(err)
						}
					}
				}
			}))
			err := e.runToEnd(ctxFor(t), c)
			if !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("Run: %v, want a crash at %s", err, fp)
			}
			if h == nil || h.Hits() != 1 {
				t.Fatalf("failpoint %s not hit", fp)
			}
			if err := e.runToEnd(ctxFor(t), e.connector(e.config(), nil)); err != nil {
				t.Fatalf("Run after restart: %v", err)
			}
			e.checkExactlyOnce(n)
		})
	}
}

// TestRewindOnDorisFault: Doris fails a precommit (docs/doris-facts.md §2: Status
// Fail), the loader aborts the checkpoint, the Connector recovers and
// rewinds, and the final rows are exact.
func TestRewindOnDorisFault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	const n = 50
	e.produceIDs(0, n, 3)
	fh, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Count: 2,
		Err: &doristest.FaultErr{Message: "injected precommit failure"}})
	if err != nil {
		t.Fatal(err)
	}
	var rewinds []Position
	c := e.connector(e.config(), nil, WithTestingKnobs(&TestingKnobs{AfterRewind: func(p Position) { rewinds = append(rewinds, p) }}))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if fh.Hits() != 2 || len(rewinds) != 2 {
		t.Fatalf("fault hits %d, rewinds %d; want 2 and 2", fh.Hits(), len(rewinds))
	}
	if got := c.Metrics().CheckpointFailures.Load(); got != 2 {
		t.Fatalf("CheckpointFailures = %d, want 2", got)
	}
	e.checkExactlyOnce(n)
}

// TestAbortKeepsLastDecision: cancelling Run's context aborts the open
// checkpoint; nothing of it is loaded and a restart completes exactly once.
func TestAbortKeepsLastDecision(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const n = 10
	e.produceIDs(0, n, 1)
	cfg := e.config()
	cfg.CheckpointMaxRows = 100 // never reached: the only way out is abort
	ctx, cancel := context.WithCancel(ctxFor(t))
	c := e.connector(cfg, nil)
	want := e.end(testTopic)
	c.knobs.AfterPoll = func(p Position) {
		if covers(p, want) {
			cancel()
		}
	}
	if err := c.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if got := e.ids(); len(got) != 0 {
		t.Fatalf("aborted checkpoint loaded rows: %v", got)
	}
	if err := e.runToEnd(ctxFor(t), e.connector(e.config(), nil)); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(n)
}
