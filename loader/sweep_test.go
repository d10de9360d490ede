package loader_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// logBuffer collects a loader's log lines (safe for the loader's
// goroutines).
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (lb *logBuffer) Write(p []byte) (int, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.b.Write(p)
}

// line returns the first log line holding every one of parts, "" if none.
func (lb *logBuffer) line(parts ...string) string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for l := range strings.SplitSeq(lb.b.String(), "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok && l != "" {
			return l
		}
	}
	return ""
}

// sweepEveryBoundary makes every checkpoint boundary sweep and logs into lb.
func sweepEveryBoundary(lb *logBuffer) func(*loader.Config) {
	return func(c *loader.Config) {
		c.SweepInterval = time.Nanosecond
		c.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

// txnStatus is the state of txn id in the emulator.
func (e *env) txnStatus(id int64) doris.TxnStatus {
	e.t.Helper()
	tx, err := e.srv.TxnByID(testDB, id)
	if err != nil {
		e.t.Fatalf("txn %d: %v", id, err)
	}
	return tx.Status
}

// runningTxnOf returns the id of the running txn of label lbl, 0 if none.
func (e *env) runningTxnOf(lbl string) int64 {
	e.t.Helper()
	txns, err := e.srv.Txns(testDB)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, tx := range txns {
		if tx.Label == lbl && (tx.Status == doris.TxnPrepare || tx.Status == doris.TxnPrecommitted) {
			return tx.ID
		}
	}
	return 0
}

// The zombie, through the HTTP requests the loader sends: one
// process decided checkpoint 1, which announced 2, and stopped before
// beginning 2; its successor recovered label 2 as UNKNOWN (nothing to
// abort, unannounced) and decided 3; then the old process woke and
// precommitted label 2 with the rows of [5, 10). The successor's next
// checkpoint boundary aborts that txn by its id: ABORTED in Doris,
// counted, logged with label, txn id and checkpoint; rows exactly once; a
// restart recovers.
func TestSweepAbortsZombiePrecommitAtCheckpointBoundary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, calls := identityEnv(t, "mysql")
	lb := &logBuffer{}
	l := e.open(sweepEveryBoundary(lb))
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, 5, 5); err != nil { // decides 1, announces 2
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	l = e.open(sweepEveryBoundary(lb))
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 5) // label 2: UNKNOWN, unannounced; the next checkpoint is 3
	if err := drive(ctx, l, 5, 10, 5); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := l.LastDecision(); id != 3 {
		t.Fatalf("last decision %d, want 3", id)
	}
	zombieLabel, err := e.owner().Label(2)
	if err != nil {
		t.Fatal(err)
	}
	zombie := e.foreignLoad(ctx, zombieLabel, true, 5, 10)
	if got := e.txnStatus(zombie); got != doris.TxnPrecommitted {
		t.Fatalf("zombie txn %d is %s, want PRECOMMITTED", zombie, got)
	}
	if err := drive(ctx, l, 10, 15, 5); err != nil { // decides 4: a boundary, the sweep runs
		t.Fatal(err)
	}
	if got := e.txnStatus(zombie); got != doris.TxnAborted {
		t.Fatalf("zombie txn %d is %s after the sweep, want ABORTED", zombie, got)
	}
	if !calls.abortedByID(zombie) || calls.abortedByLabel(zombieLabel) {
		t.Errorf("zombie txn %d: aborted by id %v, by label %v; want by id only", zombie, calls.abortedByID(zombie), calls.abortedByLabel(zombieLabel))
	}
	if n := l.SweepStats().Aborted.Load(); n != 1 {
		t.Errorf("SweepStats.Aborted = %d, want 1", n)
	}
	if n := l.SweepStats().Failed.Load(); n != 0 {
		t.Errorf("SweepStats.Failed = %d, want 0", n)
	}
	if lb.line("level=WARN", "zombie sweep: aborted", "label="+zombieLabel, fmt.Sprintf("txn_id=%d", zombie),
		"checkpoint=2", "last_decided=4", "state=PRECOMMITTED") == "" {
		t.Errorf("no WARN line naming the zombie's label, txn id, state and checkpoint; logs:\n%s", lb.b.String())
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(15)
	e.restarts(ctx, 1, 15)
}

// A zombie's late precommit found by Close is swept there (a stop leaves
// nothing behind, whatever the sweep interval). One made after the owner
// stopped is still running when the owner restarts: it is no second
// writer (its checkpoint is at or below the last decision), so the
// restart recovers instead of refusing with *SecondWriterError, and its
// recovery sweep aborts the txn by id. The restart part fails without the
// changed checkSecondWriter rule.
func TestCloseAndRestartSweepZombies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, calls := identityEnv(t, "mysql")
	lb := &logBuffer{}
	hourly := func(c *loader.Config) {
		c.SweepInterval = time.Hour
		c.Logger = slog.New(slog.NewTextHandler(lb, nil))
	}
	l := e.open(hourly)
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, 5, 5); err != nil { // decides 1, announces 2
		t.Fatal(err)
	}
	l.Close(ctx)
	l = e.open(hourly)
	recoverTo(t, ctx, l, 5)                         // 2 UNKNOWN: unannounced
	if err := drive(ctx, l, 5, 10, 5); err != nil { // decides 3
		t.Fatal(err)
	}
	first, _ := e.owner().Label(2)
	zombie := e.foreignLoad(ctx, first, true, 5, 10)
	if err := drive(ctx, l, 10, 15, 5); err != nil { // decides 4, announces 5; no sweep within the hour
		t.Fatal(err)
	}
	if got := e.txnStatus(zombie); got != doris.TxnPrecommitted {
		t.Fatalf("zombie txn %d is %s before Close, want PRECOMMITTED (no sweep within the interval)", zombie, got)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.txnStatus(zombie); got != doris.TxnAborted || !calls.abortedByID(zombie) {
		t.Fatalf("zombie txn %d is %s after Close (aborted by id: %v), want ABORTED by id", zombie, got, calls.abortedByID(zombie))
	}
	if lb.line("zombie sweep: aborted", "label="+first, "trigger=close") == "" {
		t.Errorf("no close sweep line for the zombie; logs:\n%s", lb.b.String())
	}

	l = e.open(hourly)
	recoverTo(t, ctx, l, 15)                         // 5 UNKNOWN: unannounced
	if err := drive(ctx, l, 15, 20, 5); err != nil { // decides 6
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second, _ := e.owner().Label(5)
	zombie = e.foreignLoad(ctx, second, true, 15, 20) // after the owner stopped
	l = e.open(hourly)
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 20)
	if got := e.txnStatus(zombie); got != doris.TxnAborted || !calls.abortedByID(zombie) {
		t.Fatalf("zombie txn %d is %s after the restart (aborted by id: %v), want ABORTED by id", zombie, got, calls.abortedByID(zombie))
	}
	if n := l.SweepStats().Aborted.Load(); n != 1 {
		t.Errorf("SweepStats.Aborted = %d, want 1", n)
	}
	if lb.line("zombie sweep: aborted", "label="+second, "checkpoint=5", "last_decided=6", "trigger=recovery") == "" {
		t.Errorf("no recovery sweep line for the zombie; logs:\n%s", lb.b.String())
	}
	e.finish(ctx, l, 20, 25, 5)
}

// The sweep never aborts the decided checkpoint's txns while their
// background commit is held (decided, PRECOMMITTED, at the last decision),
// nor the open checkpoint's (Sweep between Writes), nor a heal's attempt,
// whose label is the decided checkpoint's (PREPARE, at the last decision,
// not decided by txn id). Rows exactly once.
func TestSweepLeavesDecidedOpenAndHealingTxns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, calls := identityEnv(t, "mysql")
	lb := &logBuffer{}
	hold := make(chan struct{})
	var once sync.Once
	l := e.open(sweepEveryBoundary(lb), func(c *loader.Config) {
		c.Knobs = &loader.TestingKnobs{BeforeCommitAttempt: func(id uint64, _ int) {
			if id == 2 {
				once.Do(func() { <-hold })
			}
		}}
	})
	defer l.Close(ctx)
	release := sync.OnceFunc(func() { close(hold) })
	defer release() // before Close, which waits for the held commit
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, 10, 5); err != nil { // decides 1, then 2 (its commit held)
		t.Fatal(err)
	}
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Decided == nil || st.Decided.ID != 2 || st.Decided.Committed {
		t.Fatalf("decided %+v, want checkpoint 2 uncommitted", st.Decided)
	}
	decided := st.Decided.Txns[0].TxnID
	if got := e.txnStatus(decided); got != doris.TxnPrecommitted {
		t.Fatalf("decided txn %d is %s after the boundary sweep, want PRECOMMITTED (its commit is held)", decided, got)
	}
	if lb.line("trigger=checkpoint boundary") != "" || lb.line("zombie sweep") != "" {
		t.Errorf("the sweep touched something; logs:\n%s", lb.b.String())
	}
	writeRows(t, ctx, l, 10, 13) // checkpoint 3 open: its txn is PREPARE
	openLabel, _ := e.owner().Label(3)
	open := e.runningTxnOf(openLabel)
	if open == 0 {
		t.Fatalf("no running txn of the open checkpoint's label %s", openLabel)
	}
	if err := l.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if calls.abortedByID(decided) || calls.abortedByID(open) || e.txnStatus(open) != doris.TxnPrepare ||
		e.txnStatus(decided) != doris.TxnPrecommitted {
		t.Fatalf("Sweep aborted the decided txn %d or the open txn %d", decided, open)
	}
	release()
	if err := drive(ctx, l, 13, 20, 5); err != nil {
		t.Fatal(err)
	}
	if n := l.SweepStats().Aborted.Load() + l.SweepStats().Failed.Load(); n != 0 {
		t.Errorf("sweep counters %d, want 0", n)
	}
	l.Close(ctx)
	e.checkExactlyOnce(20)

	// A heal: checkpoint 2 of a fresh env crashed after its decision and
	// Doris aborted its txn; Recover heals it into the same label, and a
	// Sweep while the heal's load is open leaves it.
	h, hcalls := identityEnv(t, "mysql")
	dt := h.decideAndCrash(ctx)
	if err := h.client.AbortTxn(ctx, testDB, dt.TxnID); err != nil {
		t.Fatal(err)
	}
	hl := h.open(sweepEveryBoundary(&logBuffer{}))
	defer hl.Close(ctx)
	recoverTo(t, ctx, hl, 5)
	writeRows(t, ctx, hl, 5, 10)
	heal := h.runningTxnOf(dt.Label)
	if heal == 0 {
		t.Fatalf("no running heal txn of label %s", dt.Label)
	}
	if err := hl.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if hcalls.abortedByID(heal) || h.txnStatus(heal) != doris.TxnPrepare {
		t.Fatalf("Sweep aborted the heal's txn %d of label %s", heal, dt.Label)
	}
	if err := hl.Checkpoint(ctx, pos(10)); err != nil {
		t.Fatalf("heal checkpoint: %v", err)
	}
	h.finish(ctx, hl, 10, 30, 5)
}

// A running txn of the scope above the last decision is never swept (it
// may be the owner's own next checkpoint or a real second writer), and the
// next start still refuses it as a second writer.
func TestSweepLeavesTxnAboveLastDecisionAndRestartRefusesIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, calls := identityEnv(t, "mysql")
	l := e.open(sweepEveryBoundary(&logBuffer{}))
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, 10, 5); err != nil { // decides 1, 2
		t.Fatal(err)
	}
	above, _ := e.owner().Label(6)
	other := e.foreignLoad(ctx, above, true, 1000, 1002)
	if err := drive(ctx, l, 10, 15, 5); err != nil { // decides 3, sweeps
		t.Fatal(err)
	}
	if err := l.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if calls.abortedByID(other) || e.txnStatus(other) != doris.TxnPrecommitted {
		t.Fatalf("the sweep touched txn %d of checkpoint 6, above the last decision 3", other)
	}
	l.Close(ctx)
	l = e.open()
	defer l.Close(ctx)
	_, err := l.Recover(ctx)
	var sw *loader.SecondWriterError
	if !errors.As(err, &sw) || sw.TxnID != other || sw.Label != above {
		t.Fatalf("restart: %v, want *SecondWriterError naming txn %d label %s", err, other, above)
	}
	if e.txnStatus(other) != doris.TxnPrecommitted {
		t.Errorf("second writer's txn %d was aborted", other)
	}
}

// A listing that fails is logged and returned by Sweep; the loader stays
// usable and the next checkpoint goes on.
func TestSweepListingFailureDoesNotFailTheJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _ := identityEnv(t, "mysql")
	lb := &logBuffer{}
	l := e.open(sweepEveryBoundary(lb))
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, 5, 5); err != nil {
		t.Fatal(err)
	}
	h := e.fault(doristest.Fault{Op: doristest.FaultShowTxn, Count: -1, Err: &doristest.FaultErr{Message: "show refused"}})
	err := l.Sweep(ctx)
	if err == nil || !strings.Contains(err.Error(), "zombie sweep: list the running txns of job "+e.job) {
		t.Fatalf("Sweep with MySQL down: %v, want the listing error", err)
	}
	if err := drive(ctx, l, 5, 10, 5); err != nil { // its boundary sweep fails too
		t.Fatalf("checkpoint after a failed sweep listing: %v", err)
	}
	h.Remove()
	if err := l.Sweep(ctx); err != nil {
		t.Fatalf("Sweep after the fault: %v", err)
	}
	if lb.line("level=WARN", "zombie sweep: cannot list") == "" {
		t.Errorf("no WARN line for the failed listing; logs:\n%s", lb.b.String())
	}
}
