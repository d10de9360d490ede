package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// jumpClock is a loader.Clock on which every wait shorter than hold
// passes at once, moving the time forward by its duration (a backoff or a
// fail-fast grace costs no real time); waits of hold or longer (the
// checkpoint interval, the drain timeout) never fire. It records the
// short waits.
type jumpClock struct {
	hold time.Duration

	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
	// still stops the time: short waits still pass at once but no longer
	// move it forward (a retry loop then runs on real time, never past a
	// grace, until what it waits for is seen).
	still bool
}

// stand makes short waits pass without moving the time forward.
func (c *jumpClock) stand() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.still = true
}

func newJumpClock(hold time.Duration) *jumpClock {
	return &jumpClock{hold: hold, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if d >= c.hold {
		return ch
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.still {
		c.now = c.now.Add(d)
	}
	c.waits = append(c.waits, d)
	ch <- c.now
	return ch
}

func (c *jumpClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// txns returns the job's transactions in Doris by status.
func (e *env) txns() map[doris.TxnStatus][]doris.Transaction {
	e.t.Helper()
	all, err := e.srv.Txns(testDB)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[doris.TxnStatus][]doris.Transaction{}
	for _, tx := range all {
		out[tx.Status] = append(out[tx.Status], tx)
	}
	return out
}

// Issue 11: a job pointed at a table that does not exist retried forever
// (a new label every 2 s, /readyz 200). Now Run ends with one *FatalError
// line naming the table and the fix once the failure persisted for the
// fail-fast grace (30 s on a clock that jumps over the backoff waits:
// 1+2+4+8 s, then the rest of the grace, 15 s), with the stall reported
// as fatal from the first failure. Doris answers a load into an unknown
// table "[NOT_FOUND]... table not found, tableName=<t>" (docs/doris-facts.md
// §2.4: FE DatabaseIf.getTableOrMetaException), classified
// doris.ErrNotFound.
func TestUnknownTableFailsFastAfterGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.table = "missing"
	e.produceIDs(0, 5, 1)
	clk := newJumpClock(DefaultDrainTimeout)
	var stalls []Stall
	var c *Connector
	c = e.connector(e.config(), nil, WithClock(clk), WithRecoverBackoff(time.Second, time.Minute),
		WithFailFastAfter(30*time.Second), WithTestingKnobs(&TestingKnobs{BeforeBackoff: func(time.Duration) {
			stalls = append(stalls, c.Metrics().Stall())
		}}))
	t0 := clk.Now()
	err := c.Run(ctxFor(t))
	var fe *FatalError
	if !errors.As(err, &fe) || !errors.Is(err, doris.ErrNotFound) {
		t.Fatalf("Run: %v, want a *FatalError wrapping doris.ErrNotFound", err)
	}
	msg := err.Error()
	for _, want := range []string{"db.missing", "doris.table", "create", "table not found"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if got := clk.Now().Sub(t0); got != 30*time.Second || fe.For != 30*time.Second {
		t.Errorf("gave up after %v (FatalError.For %v), want the grace 30s", got, fe.For)
	}
	if got, want := fmt.Sprint(clk.recorded()), "[1s 2s 4s 8s 15s]"; got != want {
		t.Errorf("backoff waits %s, want %s (doubling, the last one cut at the end of the grace)", got, want)
	}
	if len(stalls) == 0 || !stalls[0].Fatal || !strings.Contains(stalls[0].Reason, "db.missing") || !stalls[0].Since.Equal(t0) {
		t.Errorf("stall during the grace = %+v, want fatal, naming db.missing, since the first failure", stalls)
	}
	if s := c.Metrics().Stall(); !s.Fatal || s.Reason == "" {
		t.Errorf("stall after giving up = %+v, want fatal with a reason", s)
	}
	if got := len(e.txns()[doris.TxnAborted]) + len(e.txns()[doris.TxnPrepare]); got != 0 {
		t.Errorf("%d txns begun for an unknown table, want 0", got)
	}
}

// A table created during the grace (a migration recreating it) is waited
// for: the job then loads everything exactly once and the stall clears.
func TestTableCreatedWithinGraceLoads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.table = "late"
	e.produceIDs(0, 10, 1)
	clk := newJumpClock(DefaultDrainTimeout)
	created := false
	c := e.connector(e.config(), nil, WithClock(clk), WithRecoverBackoff(time.Second, time.Minute),
		WithFailFastAfter(30*time.Second), WithTestingKnobs(&TestingKnobs{BeforeBackoff: func(time.Duration) {
			if !created && len(clk.recorded()) == 2 {
				created = true
				if err := e.srv.CreateTable(testDB, strings.Replace(ordersDDL, "orders", "late", 1)); err != nil {
					t.Error(err)
				}
			}
		}}))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v, want the late table to be loaded", err)
	}
	e.checkExactlyOnce(10)
	if s := c.Metrics().Stall(); s != (Stall{}) {
		t.Errorf("stall after loading = %+v, want cleared", s)
	}
}

// Rejected credentials fail fast too (grace 0: at the first failure).
// Doris answers a wrong password with a Fail/Unauthorized body
// (docs/doris-facts.md §1.2, §1.3), classified doris.ErrUnauthorized.
func TestWrongPasswordFailsFast(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	client, err := doris.NewClient(doris.Config{FE: []string{e.srv.FEURL()}, User: "root", Password: "wrong",
		MaxRetries: -1, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	e.client = client
	e.produceIDs(0, 3, 1)
	c := e.connector(e.config(), nil, WithFailFastAfter(0))
	err = c.Run(ctxFor(t))
	var fe *FatalError
	if !errors.As(err, &fe) || !errors.Is(err, doris.ErrUnauthorized) {
		t.Fatalf("Run: %v, want a *FatalError wrapping doris.ErrUnauthorized", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "doris.password") || strings.Contains(msg, "wrong") {
		t.Errorf("error %q: want it to name doris.password and never the password", msg)
	}
}

// A topic that does not exist is waited for during the grace and then
// named in a *FatalError; before issue 11 it failed at once, and a topic
// created a moment later was not waited for.
func TestMissingTopic(t *testing.T) {
	t.Parallel()
	t.Run("fails after the grace", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		cfg := e.config()
		cfg.Topic = "nope"
		clk := newJumpClock(DefaultDrainTimeout)
		c := e.connector(cfg, nil, WithClock(clk), WithRecoverBackoff(time.Second, time.Minute),
			WithFailFastAfter(10*time.Second))
		err := c.Run(ctxFor(t))
		var fe *FatalError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "kafka.topic") {
			t.Fatalf("Run: %v, want a *FatalError naming topic nope and kafka.topic", err)
		}
		if fe.For != 10*time.Second {
			t.Errorf("gave up after %v, want 10s", fe.For)
		}
	})
	t.Run("created within the grace", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		cfg := e.config()
		cfg.Topic = "soon"
		created := false
		var c *Connector
		// A short metadata cache: the topic is seen as soon as it exists.
		// The client refreshes it on real time, so once the topic is
		// created the clock stands still: the retries go on, inside the
		// grace, until the connector's metadata has the topic (before, the
		// jumps used up the hour of grace within the 10 ms cache age).
		clk := newJumpClock(DefaultDrainTimeout)
		c = e.connector(cfg, nil, WithClock(clk), WithRecoverBackoff(time.Second, time.Minute),
			WithFailFastAfter(time.Hour), WithKgoOpts(kgo.MetadataMinAge(10*time.Millisecond)), WithTestingKnobs(&TestingKnobs{
				BeforeBackoff: func(time.Duration) {
					if !created {
						created = true
						if _, err := e.adm.CreateTopic(context.Background(), 1, 1, nil, "soon"); err != nil {
							t.Error(err)
						}
						clk.stand()
					}
				},
				AfterStart: func(Position) { c.Drain() },
			}))
		if err := c.Run(ctxFor(t)); err != nil {
			t.Fatalf("Run: %v, want the topic created during the grace to be read", err)
		}
	})
}

// Issue 11: a row Doris rejects made every retry fail the same way (24
// failed checkpoints, 13 labels in 15 s). Now the first refusal
// ("[DATA_QUALITY_ERROR]too many filtered rows", docs/doris-facts.md §8) ends Run
// with a *RejectedError naming the range, label, Doris's counters and
// error log, and the ways out: one label and one aborted txn for the
// failed checkpoint, no Recover after the start. With a dead-letter topic
// configured (and no pre-check: WithRowCheck) it says honestly that such
// rows are not dead-lettered.
func TestRejectedRowsStopWithoutRetry(t *testing.T) {
	t.Parallel()
	for _, dlt := range []string{"", "orders-dlq"} {
		t.Run("dead_letter_topic="+dlt, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1)
			e.produceIDs(0, 7, 1) // the first checkpoint (row cap 7) is decided
			// longer than VARCHAR(32): filtered in any mode
			e.produce(&kgo.Record{Value: fmt.Appendf(nil, `{"id":7,"v":"%s"}`, strings.Repeat("x", 40))})
			e.produceIDs(8, 10, 1)
			cfg := e.config()
			// Bisection off: the stop path with a dead-letter topic.
			cfg.DeadLetterTopic, cfg.DeadLetterAtLeastOnce, cfg.BisectMaxFailures = dlt, true, -1
			if dlt != "" {
				if _, err := e.adm.CreateTopic(ctxFor(t), 1, 1, nil, dlt); err != nil {
					t.Fatal(err)
				}
			}
			c := e.connector(cfg, nil)
			drainAt(c, e.end(testTopic), nil)
			err := c.Run(ctxFor(t))
			var re *RejectedError
			if !errors.As(err, &re) || !errors.Is(err, doris.ErrDataQuality) {
				t.Fatalf("Run: %v, want a *RejectedError wrapping doris.ErrDataQuality", err)
			}
			msg := err.Error()
			wants := []string{re.Label, "partitions 0:[7,10)", "1 of 3 rows filtered", "_load_error_log", "max_filter_ratio",
				"too many filtered rows"}
			if dlt != "" {
				wants = append(wants, "passed the pre-check", "not dead-lettered", dlt)
			}
			for _, w := range wants {
				if w == "" || !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			m := c.Metrics()
			if m.Recovers.Load() != 1 || m.CheckpointFailures.Load() != 1 {
				t.Errorf("recovers %d, checkpoint failures %d; want 1 (the start) and 1: no retry",
					m.Recovers.Load(), m.CheckpointFailures.Load())
			}
			aborted := e.txns()[doris.TxnAborted]
			if len(aborted) != 1 || aborted[0].Label != re.Label {
				t.Errorf("aborted txns %+v, want one, of label %s: one label burnt for the failed checkpoint", aborted, re.Label)
			}
			if s := m.Stall(); !s.Fatal || !strings.Contains(s.Reason, re.Label) {
				t.Errorf("stall %+v, want fatal naming the label", s)
			}
			e.checkExactlyOnce(7)
		})
	}
}

// Transient failures (a precommit failing 4 times, docs/doris-facts.md §2) are
// retried with a backoff that doubles over consecutive failures and is
// reset by a decided checkpoint; each failed checkpoint burns exactly one
// label (one aborted txn), and the rows end exactly once.
func TestBackoffDoublesAndOneLabelPerFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 14, 1)
	fh := precommitDown(t, e, 4)
	clk := newJumpClock(DefaultDrainTimeout)
	c := e.connector(e.config(), nil, WithClock(clk), WithRecoverBackoff(time.Second, time.Minute))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(14)
	if fh.Hits() != 4 {
		t.Fatalf("fault hits %d, want 4", fh.Hits())
	}
	if got, want := fmt.Sprint(clk.recorded()), "[1s 2s 4s 8s]"; got != want {
		t.Errorf("backoff waits %s, want %s", got, want)
	}
	labels := map[string]int{}
	for _, tx := range e.txns()[doris.TxnAborted] {
		labels[tx.Label]++
	}
	if len(labels) != 4 {
		t.Errorf("aborted txns by label %v, want 4 labels, one txn each", labels)
	}
	for l, n := range labels {
		if n != 1 {
			t.Errorf("label %s burnt %d txns, want 1", l, n)
		}
	}
	if got := c.Metrics().CheckpointFailures.Load(); got != 4 {
		t.Errorf("CheckpointFailures = %d, want 4", got)
	}
}

// A job whose every precommit fails (a BE that stays broken) is held to
// about one failed transaction per backoff max (the drain, a minute, passes at once): in the first hour on the
// clock, 1+2+4+8+16+32 s then every 60 s, at most 67 transactions (the
// number docs/operations.md states), against 360 labels an hour for a
// healthy job at a 10 s checkpoint interval.
func TestStuckJobTransactionsPerHour(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 3, 1)
	precommitDown(t, e, -1)
	clk := newJumpClock(DefaultDrainTimeout)
	t0 := clk.Now()
	cfg := e.config()
	cfg.CheckpointMaxRows = 3
	var c *Connector
	c = e.connector(cfg, nil, WithClock(clk), WithDrainTimeout(time.Minute),
		WithRecoverBackoff(DefaultBackoffMin, DefaultBackoffMax), WithTestingKnobs(&TestingKnobs{
			BeforeBackoff: func(d time.Duration) {
				if clk.Now().Add(d).Sub(t0) > time.Hour {
					c.Drain()
				}
			},
		}))
	err := c.Run(ctxFor(t))
	var de *DrainError
	if !errors.As(err, &de) {
		t.Fatalf("Run: %v, want a *DrainError (drained while failing)", err)
	}
	n := len(e.txns()[doris.TxnAborted])
	t.Logf("failed transactions in the first hour of a stuck job: %d", n)
	if n > 67 || n < 60 {
		t.Errorf("%d failed transactions in an hour, want 60..67", n)
	}
}

// Issue 11: the first SIGTERM was ignored while the job retried. Now a
// Drain during a backoff wait (a clock that moves only when the test says:
// without the fix the wait never ends, and no drain timer starts) ends Run
// within the drain budget with a *DrainError that says nothing is lost and
// where the next start resumes.
func TestDrainDuringBackoffEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 14, 1) // [0,7) decided, then every precommit fails
	clk := newManualClock()
	var c *Connector
	c = e.connector(e.config(), nil, WithClock(clk), WithRecoverBackoff(time.Second, time.Minute),
		WithDrainTimeout(time.Minute), WithOnCheckpoint(func(s CheckpointStats) {
			if s.Err == nil {
				precommitDown(t, e, -1)
			}
		}), WithTestingKnobs(&TestingKnobs{BeforeBackoff: func(time.Duration) { c.Drain() }}))
	go func() {
		// The drain budget, started by Drain, passes.
		ctx := ctxFor(t)
		if err := clk.waitTimer(ctx, time.Minute); err == nil {
			clk.Advance(time.Minute)
		}
	}()
	err := c.Run(ctxFor(t))
	var de *DrainError
	if !errors.As(err, &de) || !errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("Run: %v, want a *DrainError wrapping the checkpoint failure", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "nothing is lost") || !strings.Contains(msg, `"0":7`) {
		t.Errorf("error %q: want it to say nothing is lost and resume at offset 7", msg)
	}
	e.checkExactlyOnce(7)
}

// A Drain while the start waits for a missing topic (the fail-fast grace)
// ends Run at once with a *DrainError (nothing was read).
func TestDrainDuringStartupWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	cfg := e.config()
	cfg.Topic = "nope"
	var c *Connector
	c = e.connector(cfg, nil, WithClock(newManualClock()), WithRecoverBackoff(time.Second, time.Minute),
		WithFailFastAfter(time.Hour), WithTestingKnobs(&TestingKnobs{BeforeBackoff: func(time.Duration) { c.Drain() }}))
	err := c.Run(ctxFor(t))
	var de *DrainError
	if !errors.As(err, &de) || de.Attempts != 0 {
		t.Fatalf("Run: %v, want a *DrainError with no checkpoint attempt", err)
	}
	if !strings.Contains(err.Error(), "nope") {
		t.Errorf("error %q does not name the missing topic", err)
	}
}

// Issue 11: a decided checkpoint that Doris aborted ("timeout by txn
// manager", docs/doris-facts.md §5; the emulator's TimeoutPrecommitted) was healed
// only when the next record arrived. Now the failed background commit
// wakes the Connector, which recovers and replays the checkpoint at once
// on a quiet topic (without the fix this test waits forever: no record
// comes and the interval is an hour).
func TestAbortedDecisionHealsWithoutTraffic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 7, 1) // exactly one checkpoint, at the row cap
	fps := loader.NewFailpoints()
	h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := h.Wait(ctxFor(t), 1); err != nil {
			return
		}
		e.srv.TimeoutPrecommitted()
		h.Release()
	}()
	var rec recorder
	var c *Connector
	c = e.connector(e.config(), fps, WithOnCheckpoint(func(s CheckpointStats) {
		rec.add(s)
		if len(rec.stats()) == 2 {
			c.Drain()
		}
	}))
	if err := c.Run(ctxFor(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(7)
	if got := c.Metrics().CheckpointFailures.Load(); got != 1 {
		t.Errorf("CheckpointFailures = %d, want 1 (the aborted commit)", got)
	}
}

// Issue 11: with the BE down, checkpoint failures stayed 0: only failures
// at the barrier were counted. A load that fails while the records stream
// (here refused at its begin, docs/doris-facts.md §1.5: answered before the body
// is read, so the first Write fails) now counts.
func TestStreamingFailureCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 10, 1)
	fh, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultBegin, Count: 1,
		Err: &doristest.FaultErr{Message: "injected: BE down"}})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	c := e.connector(e.config(), nil, WithOnCheckpoint(rec.add))
	if err := e.runToEnd(ctxFor(t), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.checkExactlyOnce(10)
	if fh.Hits() != 1 {
		t.Fatalf("fault hits %d, want 1", fh.Hits())
	}
	for _, s := range rec.stats() {
		if s.Err != nil {
			t.Fatalf("a checkpoint failed at the barrier (%v): the test wants the failure in Write", s.Err)
		}
	}
	if got := c.Metrics().CheckpointFailures.Load(); got != 1 {
		t.Errorf("CheckpointFailures = %d, want 1 (a failure while streaming)", got)
	}
}

// Issue 11: a failed store save (the rename's directory fsync failing)
// looped on "checkpoint store … unusable after a failed save" forever.
// Now the next Recover's Load re-syncs the store (checkpoint.ErrUnsynced)
// and the job goes on, exactly once; a store that cannot be re-synced ends
// Run with a *FatalError naming job.data_dir.
func TestFailedStoreSave(t *testing.T) {
	t.Parallel()
	t.Run("re-synced", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		e.produceIDs(0, 20, 1)
		var mu sync.Mutex
		renames := 0
		e.storeKnobs.AfterRename = func() error {
			mu.Lock()
			defer mu.Unlock()
			if renames++; renames == 3 {
				return errors.New("injected: EIO on directory fsync")
			}
			return nil
		}
		c := e.connector(e.config(), nil)
		if err := e.runToEnd(ctxFor(t), c); err != nil {
			t.Fatalf("Run: %v", err)
		}
		e.checkExactlyOnce(20)
		if got := c.Metrics().CheckpointFailures.Load(); got < 1 {
			t.Errorf("CheckpointFailures = %d, want the failed save counted", got)
		}
	})
	// Review P3: the failed save itself wraps checkpoint.ErrUnsynced and was
	// fatal at once with a grace of 0 (and always in a drain), before the
	// Load that re-syncs the store was tried. Only a failed re-sync is.
	t.Run("re-synced with no grace", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		e.produceIDs(0, 20, 1)
		var failed atomic.Bool
		e.storeKnobs.AfterRename = func() error {
			if failed.CompareAndSwap(false, true) {
				return errors.New("injected: EIO on directory fsync")
			}
			return nil
		}
		c := e.connector(e.config(), nil, WithFailFastAfter(0))
		if err := e.runToEnd(ctxFor(t), c); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !failed.Load() {
			t.Fatal("no save failed")
		}
		e.checkExactlyOnce(20)
	})
	t.Run("re-synced in a drain", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		e.produceIDs(0, 10, 1)
		var c *Connector
		var failed atomic.Bool
		e.storeKnobs.AfterRename = func() error {
			if c != nil && c.draining() && failed.CompareAndSwap(false, true) {
				return errors.New("injected: EIO on directory fsync")
			}
			return nil
		}
		c = e.connector(e.config(), nil)
		if err := e.runToEnd(ctxFor(t), c); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !failed.Load() {
			t.Fatal("no save failed during the drain")
		}
		e.checkExactlyOnce(10)
	})
	t.Run("unsyncable", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		e.produceIDs(0, 20, 1)
		e.storeKnobs.AfterRename = func() error { return errors.New("injected: EIO on directory fsync") }
		e.storeKnobs.BeforeResync = func() error { return errors.New("injected: EIO on re-sync") }
		c := e.connector(e.config(), nil, WithFailFastAfter(0))
		err := c.Run(ctxFor(t))
		var fe *FatalError
		if !errors.As(err, &fe) || !errors.Is(err, checkpoint.ErrResyncFailed) {
			t.Fatalf("Run: %v, want a *FatalError wrapping checkpoint.ErrResyncFailed", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "job.data_dir") || !strings.Contains(msg, e.dir) {
			t.Errorf("error %q: want it to name job.data_dir and %s", msg, e.dir)
		}
		// Review P6: the cut to 400 bytes kept the head of the chain and
		// lost the innermost I/O error.
		if msg := err.Error(); !strings.Contains(msg, "injected: EIO on re-sync") {
			t.Errorf("error %q: want it to keep the innermost I/O error", msg)
		}
	})
}

// One Drain ends Run from every waiting state (issue 11: a SIGTERM during
// recovery retries or a store failure was ignored): the clock never moves
// on its own, so without the fix each of these waits forever.
func TestDrainEndsEveryWaitingState(t *testing.T) {
	t.Parallel()
	t.Run("recover retries at start", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		e.produceIDs(0, 3, 1)
		// A first run leaves an announced label for Recover to look up.
		if err := e.runToEnd(ctxFor(t), e.connector(e.config(), nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultLoadState, Count: -1,
			Err: &doristest.FaultErr{Message: "injected: FE overloaded"}}); err != nil {
			t.Fatal(err)
		}
		var c *Connector
		c = e.connector(e.config(), nil, WithClock(newManualClock()), WithRecoverBackoff(time.Second, time.Minute),
			WithTestingKnobs(&TestingKnobs{BeforeBackoff: func(time.Duration) { c.Drain() }}))
		err := c.Run(ctxFor(t))
		var de *DrainError
		if !errors.As(err, &de) || de.Attempts != 0 || !strings.Contains(err.Error(), "FE overloaded") {
			t.Fatalf("Run: %v, want a *DrainError naming the Recover failure", err)
		}
		if got := c.Metrics().RecoverFailures.Load(); got != 1 {
			t.Errorf("RecoverFailures = %d, want 1", got)
		}
	})
	t.Run("Doris call blocked", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		e.produceIDs(0, 7, 1)
		fh, err := e.srv.Fault(doristest.Fault{Op: doristest.FaultPrecommit, Count: -1, Block: true})
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Release()
		clk := newManualClock()
		c := e.connector(e.config(), nil, WithClock(clk), WithDrainTimeout(time.Minute))
		go func() {
			// SIGTERM while the precommit hangs; then the drain budget passes.
			ctx := ctxFor(t)
			if err := fh.Wait(ctx, 1); err != nil {
				return
			}
			c.Drain()
			if err := clk.waitTimer(ctx, time.Minute); err == nil {
				clk.Advance(time.Minute)
			}
		}()
		err = c.Run(ctxFor(t))
		var de *DrainError
		if !errors.As(err, &de) {
			t.Fatalf("Run: %v, want a *DrainError", err)
		}
		if got := e.ids(); len(got) != 0 {
			t.Errorf("rows loaded by a checkpoint cut by the drain budget: %v", got)
		}
	})
	t.Run("store failure", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 1)
		e.produceIDs(0, 10, 1)
		e.storeKnobs.AfterRename = func() error { return errors.New("injected: EIO on directory fsync") }
		e.storeKnobs.BeforeResync = func() error { return errors.New("injected: EIO on re-sync") }
		clk := newManualClock()
		var c *Connector
		c = e.connector(e.config(), nil, WithClock(clk), WithRecoverBackoff(time.Second, time.Minute),
			WithFailFastAfter(time.Hour), WithTestingKnobs(&TestingKnobs{BeforeBackoff: func(time.Duration) { c.Drain() }}))
		go func() {
			// The drain budget passes (the drain's own retry waits too).
			if err := clk.waitTimer(ctxFor(t), DefaultDrainTimeout); err == nil {
				clk.Advance(DefaultDrainTimeout)
			}
		}()
		err := c.Run(ctxFor(t))
		if err == nil || !errors.Is(err, checkpoint.ErrUnsynced) {
			t.Fatalf("Run: %v, want it to end naming the unsynced store", err)
		}
		// Which comes first under load is a race: the drain budget (a
		// *DrainError, the stall still retriable) or the failed re-sync (a
		// *FatalError, the stall fatal). Either way the stall names the store.
		s := c.Metrics().Stall()
		if !strings.Contains(s.Reason, "checkpoint store") {
			t.Errorf("stall %+v, want it naming the checkpoint store", s)
		}
		if errors.Is(err, checkpoint.ErrResyncFailed) && !s.Fatal {
			t.Errorf("Run ended on a failed re-sync (%v) but the stall is not fatal: %+v", err, s)
		}
	})
}

// A topic deleted while the job runs: kgo reports UNKNOWN_TOPIC_OR_PARTITION
// in the fetches (after kgo.UnknownTopicRetries), which used to be logged
// and retried forever; now it ends Run with a *FatalError naming the topic
// once it lasted the fail-fast grace (0 here).
func TestTopicDeletedWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	e.produceIDs(0, 7, 1)
	var c *Connector
	deleted := false
	c = e.connector(e.config(), nil, WithFailFastAfter(0),
		WithKgoOpts(kgo.UnknownTopicRetries(1), kgo.MetadataMinAge(10*time.Millisecond), kgo.MetadataMaxAge(50*time.Millisecond)),
		WithOnCheckpoint(func(s CheckpointStats) {
			if s.Err == nil && !deleted {
				deleted = true
				if _, err := e.adm.DeleteTopics(context.Background(), testTopic); err != nil {
					t.Error(err)
				}
			}
		}))
	err := c.Run(ctxFor(t))
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "Kafka topic "+testTopic) {
		t.Fatalf("Run: %v, want a *FatalError naming topic %s", err, testTopic)
	}
	e.checkExactlyOnce(7)
}
