package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// drainAt makes c drain once it consumed everything up to want; before
// Drain, extra is called (on the Run goroutine).
func drainAt(c *Connector, want Position, extra func()) {
	done := false
	c.knobs.AfterPoll = chain(c.knobs.AfterPoll, func(p Position) {
		if !done && covers(p, want) {
			done = true
			if extra != nil {
				extra()
			}
			c.Drain()
		}
	})
}

// precommitDown makes the next count precommits fail (-1: until Remove;
// docs/doris-facts.md §2: Status Fail, the txn is aborted), as while a BE is down.
func precommitDown(t *testing.T, e *env, count int) *doristest.FaultHandle {
	t.Helper()
	fh, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Count: count,
		Err: &doristest.FaultErr{Message: "injected: BE down"}})
	if err != nil {
		t.Fatal(err)
	}
	return fh
}

// The drain's final checkpoint fails once (precommit Status Fail,
// docs/doris-facts.md §2): the drain recovers, rewinds, re-reads up to where it
// began (not the records produced after), checkpoints again and Run
// returns nil. The table holds exactly the consumed records; a restart
// loads the later ones once.
func TestDrainRetriesFailedCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	const n, later = 30, 12
	e.produceIDs(0, n, 3)
	fh := precommitDown(t, e, 1)
	cfg := e.config()
	cfg.CheckpointMaxRows = 1000 // the drain's checkpoint is the only one
	var rewinds []Position
	var rec recorder
	c := e.connector(cfg, nil, WithOnCheckpoint(rec.add),
		WithTestingKnobs(&TestingKnobs{AfterRewind: func(p Position) { rewinds = append(rewinds, p) }}))
	want := e.end(testTopic)
	drainAt(c, want, func() { e.produceIDs(n, n+later, 3) })
	if err := c.Run(ctxFor(t)); err != nil {
		t.Fatalf("Run: %v, want nil after the drain's retry", err)
	}
	if fh.Hits() != 1 || len(rewinds) != 1 {
		t.Fatalf("fault hits %d, rewinds %d; want 1 and 1", fh.Hits(), len(rewinds))
	}
	st := rec.stats()
	if len(st) != 2 || st[0].Err == nil || st[1].Err != nil {
		t.Fatalf("checkpoint attempts %+v: want one failure then one success", st)
	}
	if mustJSON(t, st[1].End) != mustJSON(t, want) {
		t.Fatalf("drain checkpoint ends at %v, want the position consumed when the drain began %v", st[1].End, want)
	}
	if m := c.Metrics(); m.CheckpointFailures.Load() != 1 || m.Checkpoints.Load() != 1 {
		t.Fatalf("metrics: failures %d checkpoints %d; want 1 and 1", m.CheckpointFailures.Load(), m.Checkpoints.Load())
	}
	e.checkExactlyOnce(n)

	if err := e.runToEnd(ctxFor(t), e.connector(e.config(), nil)); err != nil {
		t.Fatalf("restart: %v", err)
	}
	e.checkExactlyOnce(n + later)
}

// drainDownEnv produces 10 records to one partition and returns a
// Connector (row cap 7: [0,7) is decided first) that, once it consumed all
// 10, makes every precommit fail (a BE that stays down) and drains; fault
// receives the fault's handle.
func drainDownEnv(t *testing.T, e *env, fault **doristest.FaultHandle, opts ...Opt) *Connector {
	t.Helper()
	e.produceIDs(0, 10, 1)
	c := e.connector(e.config(), nil, opts...)
	drainAt(c, e.end(testTopic), func() { *fault = precommitDown(t, e, -1) })
	return c
}

// While every precommit fails, the drain retries until its timeout (a
// manual clock, advanced after the third failure) and Run returns a
// *DrainError that says nothing is lost and where the next start resumes
// (the last decided position); nothing of the drained records is loaded,
// and a restart loads them once.
func TestDrainGivesUpAfterTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	clk := newManualClock()
	const timeout = time.Minute
	var failures int
	var fh *doristest.FaultHandle
	c := drainDownEnv(t, e, &fh, WithClock(clk), WithDrainTimeout(timeout), WithOnCheckpoint(func(s CheckpointStats) {
		if s.Err != nil {
			if failures++; failures == 3 {
				clk.Advance(timeout)
			}
		}
	}))
	err := c.Run(ctxFor(t))
	var de *DrainError
	if !errors.As(err, &de) {
		t.Fatalf("Run: %v, want a *DrainError", err)
	}
	if !errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("DrainError does not wrap the checkpoint failure: %v", err)
	}
	if de.Attempts < 3 || fh.Hits() < 3 || de.Timeout != timeout {
		t.Fatalf("attempts %d, precommit faults %d, timeout %v; want ≥ 3, ≥ 3, %v", de.Attempts, fh.Hits(), de.Timeout, timeout)
	}
	if want := `{"topic":"orders","offsets":{"0":7}}`; de.Resume != want {
		t.Fatalf("Resume = %s, want the last decided position %s", de.Resume, want)
	}
	if msg := err.Error(); !strings.Contains(msg, "nothing is lost") || !strings.Contains(msg, de.Resume) {
		t.Fatalf("error %q: want it to say nothing is lost and name %s", msg, de.Resume)
	}
	e.checkExactlyOnce(7)

	fh.Remove()
	if err := e.runToEnd(ctxFor(t), e.connector(e.config(), nil)); err != nil {
		t.Fatalf("restart: %v", err)
	}
	e.checkExactlyOnce(10)
}

// Cancelling Run's context (the second signal) while a drain retries ends
// the drain at once: context.Canceled, not a *DrainError.
func TestDrainAbortedByCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	ctx, cancel := context.WithCancel(ctxFor(t))
	var failures int
	var fh *doristest.FaultHandle
	c := drainDownEnv(t, e, &fh, WithOnCheckpoint(func(s CheckpointStats) {
		if s.Err != nil {
			if failures++; failures == 2 {
				cancel()
			}
		}
	}))
	err := c.Run(ctx)
	var de *DrainError
	if !errors.Is(err, context.Canceled) || errors.As(err, &de) {
		t.Fatalf("Run: %v, want context.Canceled and no *DrainError", err)
	}
	if failures != 2 {
		t.Fatalf("%d failed checkpoints, want 2 (no retry after the cancel)", failures)
	}
	e.checkExactlyOnce(7)
}

// Review P2: a Drain that came just after Recover rewound to the start of
// a decided checkpoint Doris aborted (the heal, docs/design.md §2 recovery
// table) found nothing pending and returned nil: Run exited 0 with none of
// the rows loaded and the decision uncommitted. The drain now re-reads
// the healed checkpoint up to its decided end and checkpoints it.
func TestDrainAfterHealRewindHeals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 7, 1) // one checkpoint, at the row cap
	fps := loader.NewFailpoints()
	h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if h.Wait(ctxFor(t), 1) != nil {
			return
		}
		e.srv.TimeoutPrecommitted() // "timeout by txn manager" (docs/doris-facts.md §5)
		h.Release()
	}()
	var c *Connector
	var rewinds []Position
	c = e.connector(e.config(), fps, WithTestingKnobs(&TestingKnobs{AfterRewind: func(p Position) {
		rewinds = append(rewinds, p)
		c.Drain()
	}}))
	if err := c.Run(ctxFor(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rewinds) != 1 || rewinds[0].Offsets[0] != 0 {
		t.Fatalf("rewinds %v, want one, to the healed checkpoint's start 0", rewinds)
	}
	e.checkExactlyOnce(7)
	if id, _, committed := c.sink.LastDecision(); id != 1 || !committed {
		t.Fatalf("last decision %d committed=%v, want checkpoint 1 healed and committed", id, committed)
	}
	if pos, ok := c.Decided(); !ok || pos.Offsets[0] != 7 {
		t.Errorf("Decided() = %v %v, want offset 7", pos, ok)
	}
}
