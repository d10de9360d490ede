package loader_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Recovery table (docs/design.md §2), decided rows.
func TestRecoverDecided(t *testing.T) {
	t.Parallel()
	const n, every = 30, 5
	cases := []struct {
		name    string
		fp      string
		between func(e *env) // between crash and restart
		want    string       // state:action Recover reports
	}{
		{"visible-marked-committed", loader.FailAfterCommitBeforeLedger, nil, "VISIBLE:done"},
		{"precommitted-committed", loader.FailAfterDecide, nil, "PRECOMMITTED:commit"},
		// docs/doris-facts.md §5: PRECOMMITTED txns abort after 3600 s with
		// "timeout by txn manager"; the decided checkpoint is healed.
		{"aborted-healed", loader.FailAfterDecide, func(e *env) {
			if e.srv.TimeoutPrecommitted() == 0 {
				e.t.Fatal("no precommitted txn to time out")
			}
		}, "ABORTED:heal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			e.crashRun(ctx, crashAt(t, tc.fp, 2), n, every)
			if tc.between != nil {
				tc.between(e)
			}
			var ra recoverActions
			e.runToEnd(ctx, n, every, ra.knobs)
			if !ra.has(tc.want) {
				t.Errorf("recover actions %v, want %s", ra.got, tc.want)
			}
			e.checkExactlyOnce(n)
			if ev := ledgerEvents(t, e.dir); tc.want == "ABORTED:heal" && ev[ledger.EventHealed] != 1 {
				t.Errorf("ledger events %v, want one healed", ev)
			}
		})
	}
}

// A heal attempt that itself crashes (label reused, txn PREPARE or
// PRECOMMITTED while the decision names the aborted txn) is aborted and
// healed again.
func TestHealAttemptCrashes(t *testing.T) {
	t.Parallel()
	for _, fp := range []string{loader.FailMidStream, loader.FailAfterPrecommit} {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			const n, every = 30, 5
			ctx := context.Background()
			e := newEnv(t)
			e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every)
			e.srv.TimeoutPrecommitted()
			e.crashRun(ctx, crashAt(t, fp, 0), n, every) // crashes inside the heal attempt
			var ra recoverActions
			e.runToEnd(ctx, n, every, ra.knobs)
			e.checkExactlyOnce(n)
			if !ra.has("PREPARE:heal") && !ra.has("PRECOMMITTED:heal") && !ra.has("ABORTED:heal") {
				t.Errorf("recover actions %v, want a heal", ra.got)
			}
		})
	}
}

// Decided + UNKNOWN (label expired, docs/doris-facts.md §4): Recover stops with
// *UnresolvedError until ResolveAssume; both choices finish exactly once
// when they are the truth.
func TestUnresolvedThenResolveAssume(t *testing.T) {
	t.Parallel()
	cases := []struct {
		assume  string
		fp      string
		between func(*env)
	}{
		{checkpoint.ResolvedVisible, loader.FailAfterCommitBeforeLedger, nil},
		{checkpoint.ResolvedAborted, loader.FailAfterDecide, func(e *env) { e.srv.TimeoutPrecommitted() }},
	}
	for _, tc := range cases {
		t.Run(tc.assume, func(t *testing.T) {
			t.Parallel()
			const n, every = 30, 5
			ctx := context.Background()
			e := newEnv(t)
			e.crashRun(ctx, crashAt(t, tc.fp, 1), n, every)
			if tc.between != nil {
				tc.between(e)
			}
			if e.srv.ExpireLabels(testDB) == 0 {
				t.Fatal("nothing expired")
			}
			l := e.open()
			_, err := l.Recover(ctx)
			var ue *loader.UnresolvedError
			if !errors.As(err, &ue) {
				t.Fatalf("Recover: %v, want *UnresolvedError", err)
			}
			for _, s := range []string{ue.Label, "resolve", "--assume visible", "aborted"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if ue.TxnID <= 0 || ue.CheckpointID == 0 {
				t.Errorf("error lacks facts: %+v", ue)
			}
			l.Close(ctx)
			st, err := checkpoint.OpenFile(e.dir, e.owner())
			if err != nil {
				t.Fatal(err)
			}
			r, err := loader.ResolveAssume(ctx, st, ue.CheckpointID, tc.assume, loader.ResolveBy("tester"), loader.ResolveLedger(e.dir))
			st.Close()
			if err != nil || r.Assumed != tc.assume {
				t.Fatalf("ResolveAssume: %v, %+v", err, r)
			}
			e.runToEnd(ctx, n, every)
			e.checkExactlyOnce(n)
			if ev := ledgerEvents(t, e.dir); ev[ledger.EventResolved] != 1 {
				t.Errorf("ledger events %v, want one resolved", ev)
			}
		})
	}
}

func TestResolveAssumeRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := checkpoint.NewMemory(checkpoint.Owner{Job: "j", DB: "d", Table: "t", Writer: "0"})
	if _, err := loader.ResolveAssume(ctx, st, 1, "maybe"); err == nil {
		t.Error("unknown assumption accepted")
	}
	if _, err := loader.ResolveAssume(ctx, st, 1, checkpoint.ResolvedVisible); err == nil {
		t.Error("resolution of an empty store accepted")
	}
}

// Announced + VISIBLE: another writer used our label (docs/design.md §2).
func TestFencingAnnouncedVisible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	e.crashRun(ctx, crashAt(t, loader.FailAfterAnnounce, 0), 10, 5)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil || len(st.Announced) != 1 {
		t.Fatalf("store: %v %+v", err, st)
	}
	lbl := st.Announced[0].Label
	// An intruder loads with our announced label.
	if _, err := e.client.StreamLoad(ctx, doris.LoadRequest{DB: testDB, Table: e.table, Label: lbl, Format: "json",
		ReadJSONByLine: true}, strings.NewReader(string(row(999))+"\n")); err != nil {
		t.Fatal(err)
	}
	l := e.open()
	defer l.Close(ctx)
	_, err = l.Recover(ctx)
	var fe *loader.FencingError
	if !errors.As(err, &fe) || fe.Label != lbl || !strings.Contains(err.Error(), lbl) {
		t.Fatalf("Recover: %v, want *FencingError naming %s", err, lbl)
	}
	if err := l.Write(ctx, row(0)); !errors.Is(err, loader.ErrNotRecovered) {
		t.Errorf("Write after failed Recover: %v, want ErrNotRecovered", err)
	}
}

// Label Already Exists at begin with our own label RUNNING: aborted by
// label, begun again, rows kept (docs/doris-facts.md §2.3).
func TestBeginLabelConflictOwnLeftover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	l := e.open()
	defer l.Close(ctx)
	if _, err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	// A leftover PREPARE txn holds the first label: begin it by hand with a
	// body that never ends.
	lbl, _ := e.owner().Label(1)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := e.client.StreamLoad(ctx, doris.LoadRequest{DB: testDB, Table: e.table, Label: lbl, Format: "json",
			ReadJSONByLine: true, TwoPhaseCommit: true}, pr)
		done <- err
	}()
	pw.Write([]byte(string(row(500)) + "\n")) // returns once the BE reads: txn PREPARE
	if err := drive(ctx, l, 0, 12, 4); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-done; err == nil {
		t.Error("the leftover load of the same label succeeded; the loader should have aborted it")
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(12)
}

// Emulator faults: commit applied then the answer dropped (docs/doris-facts.md §3;
// the loader looks the label up, §6.1).
func TestCommitAnswerDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	h := e.fault(doristest.Fault{Op: doristest.FaultCommit, ApplyThenDrop: true, Count: 2})
	e.runToEnd(ctx, 30, 5)
	if h.Hits() != 2 {
		t.Errorf("fault hit %d times", h.Hits())
	}
	e.checkExactlyOnce(30)
}

// BE down in the middle of a Stream Load: the checkpoint fails, Recover
// aborts its label, and the rewind loads everything once.
func TestBEDownDuringStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	h := e.fault(doristest.Fault{Op: doristest.FaultStream, Block: true, Count: 1})
	// The abort of the failed checkpoint retries while the BE is down, for
	// the whole budget: keep it short.
	l := e.open(func(c *loader.Config) { c.Retry.MaxElapsed = 100 * time.Millisecond })
	defer l.Close(ctx)
	if _, err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- drive(ctx, l, 0, 20, 5) }()
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.srv.BEDown()
	h.Release()
	err := <-errc
	if !errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("drive with BE down: %v, want ErrNeedRecover", err)
	}
	if err := e.srv.BEUp(); err != nil {
		t.Fatal(err)
	}
	p, err := l.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := drive(ctx, l, next(t, p), 20, 5); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(20)
}

func TestSecondProcessRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	l := e.open()
	defer l.Close(ctx)
	_, err := checkpoint.OpenFile(e.dir, e.owner())
	var le *checkpoint.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second open: %v, want *checkpoint.LockedError", err)
	}
}

func TestCorruptStoreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	e.runToEnd(ctx, 10, 5)
	if err := os.WriteFile(filepath.Join(e.dir, checkpoint.FileName), []byte(`{"format":"doris-sink-checkpoint","ver`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := checkpoint.OpenFile(e.dir, e.owner())
	var ce *checkpoint.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("open corrupt store: %v, want *checkpoint.CorruptError", err)
	}
}

func TestBatchModeRefused(t *testing.T) {
	t.Parallel()
	st := checkpoint.NewMemory(checkpoint.Owner{Job: "j", DB: "d", Table: "t", Writer: "0"})
	_, err := loader.New(nil, loader.Config{Job: "j", DB: "d", Table: "t", Store: st, BatchMode: true})
	if err == nil {
		t.Fatal("nil client accepted")
	}
	e := newEnv(t)
	_, err = loader.New(e.client, loader.Config{Job: "j", DB: "d", Table: "t", Store: st, BatchMode: true})
	if err == nil {
		t.Fatal("batch mode with exactly-once accepted")
	}
	for _, s := range []string{"delivery.batch_mode", "delivery.guarantee", "at-least-once"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
	// Issue 11 ("no option that does nothing"): batch mode is not
	// implemented, so at-least-once refuses it too.
	if _, err := loader.New(e.client, loader.Config{Job: "j", DB: "d", Table: "t", Store: st, BatchMode: true,
		Guarantee: loader.AtLeastOnce}); err == nil || !strings.Contains(err.Error(), "not implemented") {
		t.Errorf("batch mode with at-least-once: %v, want a refusal saying it is not implemented", err)
	}
	_, err = loader.New(e.client, loader.Config{DB: "d", Store: st})
	for _, s := range []string{"job.name", "doris.table"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v does not name %q", err, s)
		}
	}
}

// At-least-once (docs/design.md §4): a crash after the load but before the
// position is saved loads that checkpoint again; nothing is lost.
func TestAtLeastOnceCrash(t *testing.T) {
	t.Parallel()
	const n, every = 30, 5
	ctx := context.Background()
	e := newEnv(t)
	alo := func(c *loader.Config) { c.Guarantee = loader.AtLeastOnce }
	l := e.open(alo, func(c *loader.Config) { c.Failpoints = crashAt(t, loader.FailAfterPrecommit, 2) })
	p, err := l.Recover(ctx)
	if err == nil {
		err = drive(ctx, l, next(t, p), n, every)
	}
	if !errors.Is(err, loader.ErrCrashed) {
		t.Fatalf("drive: %v, want ErrCrashed", err)
	}
	l.Close(ctx)
	e.runToEnd(ctx, n, every, alo)
	if d := e.checkAtLeastOnce(n); d != every {
		t.Errorf("%d duplicates, want %d (the checkpoint loaded before the crash)", d, every)
	}
	e.checkNoRunningTxn()
}

// At-least-once without crashes is exactly once; an in-process failure
// reuses the label.
func TestAtLeastOnceSteady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	fps := loader.NewFailpoints()
	fps.Arm(loader.FailMidStream, loader.ReturnError(nil).Times(1).Skip(1))
	e.runToEnd(ctx, 30, 5, func(c *loader.Config) { c.Guarantee = loader.AtLeastOnce; c.Failpoints = fps })
	e.checkExactlyOnce(30)
}

// A deleted checkpoint file must not silently restart the job from the
// source's beginning: the ledger beside it proves the job ran.
func TestDeletedStoreWithLedgerRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	e.runToEnd(ctx, 10, 5)
	if err := os.Remove(filepath.Join(e.dir, checkpoint.FileName)); err != nil {
		t.Fatal(err)
	}
	l := e.open()
	defer l.Close(ctx)
	_, err := l.Recover(ctx)
	if !errors.Is(err, loader.ErrStoreReset) {
		t.Fatalf("recover on a new store beside an old ledger: %v, want ErrStoreReset", err)
	}
	e.checkExactlyOnce(10)
}

// A ledger holding only table changes (a table created by the sink, then a
// crash before the first checkpoint was announced) is no evidence of
// loads: the new store starts; one checkpoint entry more makes it
// evidence again.
func TestNewStoreBesideTableChangesStarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	l := e.open()
	l.RecordTableChange(ledger.EventTableCreated, "CREATE TABLE IF NOT EXISTS `db`.`t` (…)")
	l.RecordTableChangeOf("db.u", ledger.EventSchemaChanged, "ALTER TABLE `db`.`u` ADD COLUMN `c` INT NULL")
	l.Close(ctx)
	l = e.open()
	if _, err := l.Recover(ctx); err != nil {
		t.Fatalf("recover beside a ledger of table changes only: %v", err)
	}
	l.Close(ctx)
	entries, _, err := ledger.ReadFile(e.dir)
	if err != nil || len(entries) != 2 || entries[1].DB != "db" || entries[1].Table != "u" {
		t.Fatalf("ledger %+v %v, want the two table changes, the second naming db.u", entries, err)
	}
	if err := os.Remove(filepath.Join(e.dir, checkpoint.FileName)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	lg, err := ledger.Open(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := lg.Append(ledger.Entry{Event: ledger.EventDecided, Checkpoint: 1, Job: "j", DB: "db", Table: "t"}); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	l = e.open()
	defer l.Close(ctx)
	if _, err := l.Recover(ctx); !errors.Is(err, loader.ErrStoreReset) {
		t.Fatalf("recover beside a ledger with a decided entry: %v, want ErrStoreReset", err)
	}
}
