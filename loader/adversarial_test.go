package loader_test

// Adversarial scenarios: each faults the exactly-once engine at one precise
// point (a failpoint, an emulator fault or a Doris clock) and checks the
// table row by row against the source plus no lingering PREPARE or
// PRECOMMITTED txn (checkExactlyOnce).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// seqDDL is a merge-on-write Unique Key table ordered by a sequence column
// (docs/doris-facts.md §7).
const seqDDL = "CREATE TABLE events_s (id BIGINT, v VARCHAR(32), seq BIGINT) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) " +
	`BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true", "function_column.sequence_col" = "seq")`

// updKeys is the number of keys the update source cycles through.
const updKeys = 3

// updRow is source record i of an update stream: key i%updKeys gets value
// v<i> at sequence i. The newest record of a key must win.
func updRow(i int) []byte {
	return fmt.Appendf(nil, `{"id":%d,"v":"v%d","seq":%d}`, i%updKeys, i, i)
}

// checkLatest checks an update table after records [0, n) of updRow: each
// key holds the value of its newest record, nothing else is there, and no
// txn lingers. On a table without a sequence column this is docs/design.md §2
// invariant 3 (ordered commits).
func (e *env) checkLatest(n int) {
	e.t.Helper()
	rows, err := e.srv.Rows(testDB, e.table)
	if err != nil {
		e.t.Fatal(err)
	}
	want := map[int64]string{}
	for i := range n {
		want[int64(i%updKeys)] = fmt.Sprintf("v%d", i)
	}
	got := map[int64]string{}
	for _, r := range rows {
		id, _ := r[0].(int64)
		v, _ := r[1].(string)
		if _, dup := got[id]; dup {
			e.t.Errorf("key %d twice in a unique table", id)
		}
		got[id] = v
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Errorf("table %s: %v, want the newest value per key %v", e.table, got, want)
	}
	e.checkNoRunningTxn()
}

// A decided checkpoint's background commit finds its txn ABORTED: Doris
// timed it out (docs/doris-facts.md §5, "timeout by txn manager") while the commit
// request was stuck. The next Checkpoint surfaces it (ErrTxnAborted,
// ErrNeedRecover); Recover heals it into the same label; the table is exact,
// and on Unique Key tables the newest value wins (invariant 3: nothing later
// was decided in between).
func TestBackgroundCommitFindsTxnAborted(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"events", "events_u", "events_s"} {
		t.Run(table, func(t *testing.T) {
			t.Parallel()
			const n, every = 20, 5
			ctx := context.Background()
			e := newEnv(t)
			if err := e.srv.CreateTable(testDB, seqDDL); err != nil {
				t.Fatal(err)
			}
			e.table = table
			rowOf := row
			if table != "events" {
				rowOf = updRow
			}
			h := e.fault(doristest.Fault{Op: doristest.FaultCommit, Block: true})
			var ra recoverActions
			l := e.open(ra.knobs)
			defer l.Close(ctx)
			recoverTo(t, ctx, l, 0)
			if err := driveWith(ctx, l, 0, every, every, rowOf); err != nil {
				t.Fatal(err)
			}
			if err := h.Wait(ctx, 1); err != nil { // the commit of checkpoint 1 is stuck
				t.Fatal(err)
			}
			if got := e.srv.TimeoutPrecommitted(); got != 1 {
				t.Fatalf("timed out %d txns, want 1", got)
			}
			h.Release()
			err := driveWith(ctx, l, every, 2*every, every, rowOf)
			var ce *loader.CheckpointError
			if !errors.Is(err, loader.ErrNeedRecover) || !errors.Is(err, loader.ErrTxnAborted) || !errors.As(err, &ce) ||
				ce.Stage != "commit of previous" {
				t.Fatalf("next checkpoint: %v, want a CheckpointError at commit of previous wrapping ErrTxnAborted", err)
			}
			if !strings.Contains(err.Error(), "timeout by txn manager") {
				t.Errorf("error %q does not give Doris's abort reason", err)
			}
			recoverTo(t, ctx, l, 0) // heal: replay [0, 5)
			if !ra.has("ABORTED:heal") {
				t.Errorf("recover actions %v, want ABORTED:heal", ra.got)
			}
			if err := driveWith(ctx, l, 0, n, every, rowOf); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if table == "events" {
				e.checkExactlyOnce(n)
			} else {
				e.checkLatest(n)
			}
			if ev := ledgerEvents(t, e.dir); ev[ledger.EventHealed] != 1 {
				t.Errorf("ledger events %v, want one healed", ev)
			}
		})
	}
}

// Heal where the replay's range differs from the decided one (the source's
// checkpoint boundaries moved): the healed decision takes the new end and
// the rows are exact for the new range.
func TestHealReplayLongerOrShorter(t *testing.T) {
	t.Parallel()
	for _, every := range []int{3, 12} { // original ranges are 5 long
		t.Run(fmt.Sprint("every", every), func(t *testing.T) {
			t.Parallel()
			const n = 30
			ctx := context.Background()
			e := newEnv(t)
			e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 1), n, 5) // decided [5, 10), PRECOMMITTED
			if e.srv.TimeoutPrecommitted() != 1 {
				t.Fatal("no precommitted txn to time out")
			}
			l := e.open()
			defer l.Close(ctx)
			recoverTo(t, ctx, l, 5)
			e.finish(ctx, l, 5, n, every)
			st, err := checkpoint.ReadFile(e.dir)
			if err != nil {
				t.Fatal(err)
			}
			var healed *checkpoint.Decision
			for _, d := range append(st.History, *st.Decided) {
				if d.ID == 2 {
					healed = &d
				}
			}
			// drive checkpoints when (i+1)%every == 0: from 5 that is 6 for
			// every 3 and 12 for every 12.
			wantEnd := map[int]int{3: 6, 12: 12}[every]
			if healed == nil || healed.Healed != 1 || next(t, healed.Start) != 5 || next(t, healed.End) != wantEnd {
				t.Errorf("healed decision %+v, want checkpoint 2 healed once over [5, %d)", healed, wantEnd)
			}
		})
	}
}

// Heal on a Unique Key table without a sequence column: later records
// overwrite earlier ones, so the replayed checkpoint must land before any
// later data (invariant 3).
func TestHealUniqueKeyNewestWins(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"events_u", "events_s"} {
		t.Run(table, func(t *testing.T) {
			t.Parallel()
			const n, every = 30, 4
			ctx := context.Background()
			e := newEnv(t)
			if err := e.srv.CreateTable(testDB, seqDDL); err != nil {
				t.Fatal(err)
			}
			e.table = table
			l := e.open(func(c *loader.Config) { c.Failpoints = crashAt(t, loader.FailAfterDecide, 2) })
			recoverTo(t, ctx, l, 0)
			if err := driveWith(ctx, l, 0, n, every, updRow); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("drive: %v, want ErrCrashed", err)
			}
			l.Close(ctx)
			e.srv.TimeoutPrecommitted()
			l = e.open()
			defer l.Close(ctx)
			recoverTo(t, ctx, l, 2*every)
			if err := driveWith(ctx, l, 2*every, n, every, updRow); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			e.checkLatest(n)
		})
	}
}

// At-least-once, ambiguous load (docs/doris-facts.md §2, transport lost after the
// load committed): the label is looked up (§6.1); VISIBLE is settled by an
// empty-body probe that answers Label Already Exists with the holder's txn
// id (§2.5), so the checkpoint succeeds without loading twice. A load lost
// before commit (txn PREPARE) is aborted and retried under the same label;
// one rolled back by the BE (ABORTED) is retried too.
func TestAtLeastOnceAmbiguousLoad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		fault doristest.Fault
	}{
		{"committed-answer-lost", doristest.Fault{Op: doristest.FaultCommit, ApplyThenDrop: true}},
		{"prepare-answer-lost", doristest.Fault{Op: doristest.FaultCommit, Refuse: true}},
		{"stream-dropped", doristest.Fault{Op: doristest.FaultStream, Refuse: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n, every = 20, 5
			ctx := context.Background()
			e := newEnv(t)
			tc.fault.Label, _ = e.owner().Label(2)
			h := e.fault(tc.fault)
			e.runToEnd(ctx, n, every, func(c *loader.Config) { c.Guarantee = loader.AtLeastOnce })
			if h.Hits() != 1 {
				t.Fatalf("fault hit %d times", h.Hits())
			}
			e.checkExactlyOnce(n)
			entries, _, err := ledger.ReadFile(e.dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range entries {
				if en.Event == ledger.EventCommitted && en.Label == tc.fault.Label && en.TxnID <= 0 {
					t.Errorf("ledger entry %+v lacks the probed txn id", en)
				}
			}
		})
	}
}

// At-least-once, an in-process failure after the load committed (position
// not saved): the retry must not reuse the label, which Doris holds
// FINISHED: that is our own load, not another writer (no FencingError). The
// checkpoint is loaded again (duplicates are the mode's contract), nothing
// is lost.
func TestAtLeastOnceErrorAfterLoad(t *testing.T) {
	t.Parallel()
	for _, fp := range []string{loader.FailAfterPrecommit, loader.FailBeforeDecide, loader.FailAfterDecide} {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			const n, every = 20, 5
			ctx := context.Background()
			e := newEnv(t)
			fps := loader.NewFailpoints()
			h, _ := fps.Arm(fp, loader.ReturnError(nil).Times(1).Skip(1))
			e.runToEnd(ctx, n, every, func(c *loader.Config) { c.Guarantee = loader.AtLeastOnce; c.Failpoints = fps })
			if h.Hits() != 1 {
				t.Fatalf("failpoint acted %d times", h.Hits())
			}
			dups := e.checkAtLeastOnce(n)
			if fp != loader.FailAfterDecide && dups != every {
				t.Errorf("%d duplicates, want %d (the checkpoint loaded before the failure)", dups, every)
			}
			if fp == loader.FailAfterDecide && dups != 0 {
				t.Errorf("%d duplicates after a failure past the position save", dups)
			}
			e.checkNoRunningTxn()
		})
	}
}

// Label Already Exists at begin (docs/doris-facts.md §2.3), by ExistingJobStatus:
// our own leftover RUNNING or PRECOMMITTED txn is aborted by label and the
// load begun again with its rows; FINISHED is a fencing violation (another
// writer committed our label): the checkpoint fails naming the label,
// nothing of ours is loaded, and Recover refuses too.
func TestBeginLabelConflictByExistingJobStatus(t *testing.T) {
	t.Parallel()
	for _, status := range []string{doris.JobPrecommitted, doris.JobFinished} {
		t.Run(status, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			lbl, _ := e.owner().Label(1)
			res, err := e.client.StreamLoad(ctx, doris.LoadRequest{DB: testDB, Table: e.table, Label: lbl, Format: "json",
				ReadJSONByLine: true, TwoPhaseCommit: true}, strings.NewReader(string(row(999))+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if status == doris.JobFinished {
				if err := e.client.CommitTxn(ctx, testDB, res.TxnID); err != nil {
					t.Fatal(err)
				}
			}
			l := e.open()
			defer l.Close(ctx)
			recoverTo(t, ctx, l, 0)
			err = drive(ctx, l, 0, 12, 4)
			if status == doris.JobPrecommitted {
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Close(ctx); err != nil {
					t.Fatal(err)
				}
				e.checkExactlyOnce(12)
				return
			}
			var fe *loader.FencingError
			if !errors.As(err, &fe) || fe.Label != lbl || !errors.Is(err, loader.ErrNeedRecover) {
				t.Fatalf("drive: %v, want a CheckpointError wrapping *FencingError for %s", err, lbl)
			}
			if _, err := l.Recover(ctx); !errors.As(err, &fe) {
				t.Fatalf("recover: %v, want *FencingError", err)
			}
			if got := e.counts(); len(got) != 1 || got[999] != 1 {
				t.Errorf("table %v, want only the other writer's row", got)
			}
			e.checkNoRunningTxn()
		})
	}
}

// The commit answer is lost twice (Refuse: not applied, PRECOMMITTED), then
// the BE goes down while the commit is retried: every attempt is resolved
// by label lookup at the FE (docs/doris-facts.md §6.1), never by guessing; when the
// BE is back the commit lands once.
func TestCommitDroppedThenBEDown(t *testing.T) {
	t.Parallel()
	const n, every = 15, 5
	ctx := context.Background()
	e := newEnv(t)
	e.fault(doristest.Fault{Op: doristest.FaultCommit, Refuse: true, Count: 2})
	committed := make(chan error, 1)
	var attempts atomic.Int32
	l := e.open(func(c *loader.Config) {
		c.Knobs = &loader.TestingKnobs{
			BeforeCommitAttempt: func(id uint64, attempt int) {
				if id != 1 {
					return
				}
				attempts.Store(int32(attempt))
				switch attempt {
				case 3: // after the two lost answers
					e.srv.BEDown()
				case 6:
					if err := e.srv.BEUp(); err != nil {
						t.Error(err)
					}
				}
			},
			AfterCommit: func(id uint64, err error) {
				if id == 1 {
					committed <- err
				}
			},
		}
	})
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, every, every); err != nil {
		t.Fatal(err)
	}
	if err := <-committed; err != nil {
		t.Fatalf("commit of checkpoint 1: %v", err)
	}
	if a := attempts.Load(); a < 6 {
		t.Errorf("commit took %d attempts, want at least 6", a)
	}
	e.finish(ctx, l, every, n, every)
}

// A bad row makes Doris refuse the precommit ("[DATA_QUALITY_ERROR]too many
// filtered rows", docs/doris-facts.md §2.4, max_filter_ratio 0): the checkpoint
// fails with a CheckpointError naming label, stage and the position to
// resume from, matching doris.ErrDataQuality and pointing at the error log;
// nothing of it is committed, earlier checkpoints stay, no txn lingers.
// Replaying the same data fails the same way; after the row is fixed at
// the source the job finishes exactly once.
func TestPrecommitTooManyFilteredRows(t *testing.T) {
	t.Parallel()
	const n, every, bad = 15, 5, 7
	ctx := context.Background()
	e := newEnv(t)
	badRow := func(i int) []byte {
		if i == bad { // longer than VARCHAR(32): filtered in any mode
			return fmt.Appendf(nil, `{"id":%d,"v":"%s"}`, i, strings.Repeat("x", 40))
		}
		return row(i)
	}
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	for range 2 { // the same bad data fails the same way
		err := driveWith(ctx, l, next(t, l.Position()), n, every, badRow)
		var ce *loader.CheckpointError
		if !errors.As(err, &ce) || !errors.Is(err, loader.ErrNeedRecover) || !errors.Is(err, doris.ErrDataQuality) {
			t.Fatalf("drive with a bad row: %v, want a CheckpointError wrapping doris.ErrDataQuality", err)
		}
		if ce.Stage != "precommit" || next(t, ce.Position) != every {
			t.Errorf("checkpoint error stage %q position %s, want precommit at %s", ce.Stage, ce.Position, pos(every))
		}
		for _, s := range []string{ce.Label, string(pos(every)), "too many filtered rows", "_load_error_log"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not mention %q", err, s)
			}
		}
		// The first checkpoint commits in the background; Recover waits
		// for it, so the table is checked after Recover.
		recoverTo(t, ctx, l, every)
		if got := e.counts(); len(got) != every {
			t.Errorf("table has %d ids after the failed checkpoint, want the first %d", len(got), every)
		}
		e.checkNoRunningTxn()
	}
	e.finish(ctx, l, every, n, every)
}

// The running-txn quota (max_running_txn_num_per_db, docs/doris-facts.md §5) is
// small: the begin of checkpoint N+1 may find checkpoint N's txn still
// running (being committed in the background). The loader waits for its
// own commit and begins again instead of failing the checkpoint.
func TestRunningTxnQuota(t *testing.T) {
	t.Parallel()
	for _, limit := range []int64{1, 2} {
		t.Run(fmt.Sprint("limit", limit), func(t *testing.T) {
			t.Parallel()
			const n, every = 30, 3
			ctx := context.Background()
			e := newEnv(t, doristest.FEConfig(doristest.ConfMaxRunningTxnPerDB, limit))
			// Hold the commit of checkpoint 1 so that the begin of checkpoint
			// 2 surely meets its txn running; release it once Doris refused
			// that begin (limit 1) or at once (limit 2).
			lbl, _ := e.owner().Label(1)
			h := e.fault(doristest.Fault{Op: doristest.FaultCommit, Label: lbl, Block: true})
			qw := &quotaWatch{Doris: e.client, onQuota: h.Release}
			cfg := e.config()
			l, err := loader.New(qw, cfg)
			if err != nil {
				cfg.Store.Close()
				t.Fatal(err)
			}
			defer l.Close(ctx)
			recoverTo(t, ctx, l, 0)
			if err := drive(ctx, l, 0, every, every); err != nil {
				t.Fatal(err)
			}
			if err := h.Wait(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if limit > 1 {
				h.Release()
			}
			errc := make(chan error, 1)
			go func() { errc <- drive(ctx, l, every, n, every) }()
			if err := <-errc; err != nil {
				t.Fatalf("drive: %v", err)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			e.checkExactlyOnce(n)
			if q := qw.refused.Load(); (limit == 1) != (q > 0) {
				t.Errorf("Doris refused %d begins for the running-txn quota (limit %d)", q, limit)
			}
		})
	}
}

// quotaWatch counts Stream Loads refused for the running-txn quota and
// calls onQuota after each.
type quotaWatch struct {
	loader.Doris
	onQuota func()
	refused atomic.Int32
}

func (q *quotaWatch) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	res, err := q.Doris.StreamLoad(ctx, req, body)
	if errors.Is(err, doris.ErrRunningTxnQuota) {
		q.refused.Add(1)
		q.onQuota()
	}
	return res, err
}

// Close in the middle of a checkpoint: rows written but not checkpointed
// are aborted (not loaded), the previous checkpoint's commit is finished,
// and a new loader resumes from the last decided position exactly once.
// With a Close deadline that passes while the commit is stuck, Close
// reports it and the next Recover commits the decided checkpoint.
func TestCloseMidCheckpoint(t *testing.T) {
	t.Parallel()
	for _, stuck := range []bool{false, true} {
		t.Run(fmt.Sprint("commit-stuck-", stuck), func(t *testing.T) {
			t.Parallel()
			const n, every = 20, 5
			ctx := context.Background()
			e := newEnv(t)
			var h *doristest.FaultHandle
			if stuck {
				lbl, _ := e.owner().Label(2)
				h = e.fault(doristest.Fault{Op: doristest.FaultCommit, Label: lbl, Block: true})
			}
			l := e.open()
			recoverTo(t, ctx, l, 0)
			if err := drive(ctx, l, 0, 2*every, every); err != nil {
				t.Fatal(err)
			}
			writeRows(t, ctx, l, 2*every, 2*every+3) // checkpoint 3 is open
			cctx := ctx
			if stuck {
				if err := h.Wait(ctx, 1); err != nil {
					t.Fatal(err)
				}
				var cancel context.CancelFunc
				cctx, cancel = context.WithCancel(ctx)
				cancel() // the deadline has passed
			}
			err := l.Close(cctx)
			if stuck != (err != nil) {
				t.Fatalf("close: %v (commit stuck: %v)", err, stuck)
			}
			if stuck && !strings.Contains(err.Error(), "commit of checkpoint 2") {
				t.Errorf("close error %q does not name the unfinished commit", err)
			}
			if err := l.Write(ctx, row(0)); !errors.Is(err, loader.ErrClosed) {
				t.Errorf("write after close: %v, want ErrClosed", err)
			}
			if stuck {
				// The held commit request was cancelled by Close; the fault
				// (one call) is used up, so it is never applied.
				defer h.Release()
			}
			var ra recoverActions
			l = e.open(ra.knobs)
			defer l.Close(ctx)
			recoverTo(t, ctx, l, 2*every)
			if stuck && !ra.has("PRECOMMITTED:commit") {
				t.Errorf("recover actions %v, want PRECOMMITTED:commit", ra.got)
			}
			e.finish(ctx, l, 2*every, n, every)
		})
	}
}

// Recover called twice in a row, and again with a checkpoint open, returns
// the same position and leaves nothing behind, in every recovery row that
// changes something: announced PRECOMMITTED (abort), decided PRECOMMITTED
// (commit), decided ABORTED (heal), and at-least-once.
func TestRecoverTwiceInARow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		fp      string
		timeout bool
		alo     bool
		want    int
	}{
		{"announced-precommitted", loader.FailAfterPrecommit, false, false, 5},
		{"decided-precommitted", loader.FailAfterDecide, false, false, 10},
		{"decided-aborted", loader.FailAfterDecide, true, false, 5},
		{"at-least-once", loader.FailAfterPrecommit, false, true, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n, every = 20, 5
			ctx := context.Background()
			e := newEnv(t)
			mut := func(c *loader.Config) {
				if tc.alo {
					c.Guarantee = loader.AtLeastOnce
				}
			}
			// Crash at the second hit of tc.fp, in the case's mode.
			l := e.open(mut, func(c *loader.Config) { c.Failpoints = crashAt(t, tc.fp, 1) })
			recoverTo(t, ctx, l, 0)
			if err := drive(ctx, l, 0, n, every); !errors.Is(err, loader.ErrCrashed) {
				t.Fatalf("drive: %v, want ErrCrashed", err)
			}
			l.Close(ctx)
			if tc.timeout {
				e.srv.TimeoutPrecommitted()
			}
			l = e.open(mut)
			defer l.Close(ctx)
			for range 2 {
				recoverTo(t, ctx, l, tc.want)
			}
			writeRows(t, ctx, l, tc.want, tc.want+2) // open a checkpoint, then recover again
			recoverTo(t, ctx, l, tc.want)
			if err := drive(ctx, l, tc.want, n, every); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.alo {
				if d := e.checkAtLeastOnce(n); d != every {
					t.Errorf("%d duplicates, want %d", d, every)
				}
				e.checkNoRunningTxn()
				return
			}
			e.checkExactlyOnce(n)
		})
	}
}

// Participant, crash and recover (the Flink-style API): committables
// precommitted by a participant that then dies are committed by a new one
// from the coordinator's stored JSON, twice without harm; an abort after the
// commit is refused (doris.ErrTxnAlreadyCommitted); a commit after an abort
// is an *AbortedError; a commit of a txn Doris no longer knows (expired) is
// an error naming label and txn at once, not a retry loop.
func TestParticipantCrashRecover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	target := loader.Target{DB: testDB, Table: e.table, Format: "json"}
	var stored []byte
	{
		p := newParticipant(t, e)
		var cs []loader.Committable
		for k := range 2 {
			tx, err := p.Begin(ctx, fmt.Sprintf("app:events:0:%d", k+1), target)
			if err != nil {
				t.Fatal(err)
			}
			for i := k * 10; i < k*10+10; i++ {
				if err := tx.Write(row(i)); err != nil {
					t.Fatal(err)
				}
			}
			c, err := tx.Precommit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		stored, _ = json.Marshal(cs)
		// The participant's process dies here.
	}
	var cs []loader.Committable
	if err := json.Unmarshal(stored, &cs); err != nil {
		t.Fatal(err)
	}
	p := newParticipant(t, e)
	for range 2 {
		if err := p.Recover(ctx, cs); err != nil {
			t.Fatalf("recover: %v", err)
		}
	}
	if err := p.Commit(ctx, cs[0]); err != nil {
		t.Errorf("commit after recover: %v", err)
	}
	if err := p.Abort(ctx, cs[1]); !errors.Is(err, doris.ErrTxnAlreadyCommitted) {
		t.Errorf("abort after commit: %v, want ErrTxnAlreadyCommitted", err)
	}
	e.checkExactlyOnce(20)

	// Abort then commit.
	tx, _ := p.Begin(ctx, "app:events:0:3", target)
	tx.Write(row(100))
	c, err := tx.Precommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Abort(ctx, c); err != nil {
		t.Fatal(err)
	}
	var ae *loader.AbortedError
	if err := p.Commit(ctx, c); !errors.As(err, &ae) || !errors.Is(err, loader.ErrTxnAborted) || ae.Label != c.Label {
		t.Errorf("commit after abort: %v, want *AbortedError", err)
	}
	// Expired: Doris no longer knows the txn or its label (§4 retention).
	e.srv.ExpireLabels(testDB)
	err = p.Commit(ctx, c)
	if err == nil || !errors.Is(err, doris.ErrTxnNotFound) || !strings.Contains(err.Error(), c.Label) ||
		!strings.Contains(err.Error(), fmt.Sprint(c.TxnID)) {
		t.Errorf("commit of an expired txn: %v, want an error wrapping doris.ErrTxnNotFound naming label and txn", err)
	}
	if strings.Contains(fmt.Sprint(err), "giving up") {
		t.Errorf("commit of an expired txn retried until the budget ran out: %v", err)
	}
	if err := p.Abort(ctx, c); err != nil {
		t.Errorf("abort of an expired txn: %v", err)
	}
	e.checkExactlyOnce(20)
	if _, err := p.Begin(ctx, "app:events:0:4", loader.Target{DB: testDB, Table: e.table,
		Properties: map[string]string{"two_phase_commit": "false"}}); err == nil {
		t.Error("a target overriding two_phase_commit was accepted")
	}
	if err := p.Commit(ctx, loader.Committable{DB: testDB, Label: "x"}); err == nil {
		t.Error("a committable without txn id was accepted")
	}
}

// A decided checkpoint's txn was aborted and then expired (docs/doris-facts.md §4:
// Doris forgets it), the operator resolved it "aborted", and the heal
// attempt crashed after its precommit: the label is PRECOMMITTED (the heal
// attempt) while committing the decided txn id answers "transaction [id]
// not found". Recover must abort the attempt and heal again, not retry the
// commit until the budget runs out.
func TestHealAfterResolveAbortedCrashesAfterPrecommit(t *testing.T) {
	t.Parallel()
	const n, every = 20, 5
	ctx := context.Background()
	e := newEnv(t)
	e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 1), n, every)
	if e.srv.TimeoutPrecommitted() != 1 || e.srv.ExpireLabels(testDB) == 0 {
		t.Fatal("nothing to time out or expire")
	}
	st, err := checkpoint.OpenFile(e.dir, e.owner())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loader.ResolveAssume(ctx, st, 2, checkpoint.ResolvedAborted, loader.ResolveBy("tester")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	e.crashRun(ctx, crashAt(t, loader.FailAfterPrecommit, 0), n, every) // inside the heal attempt
	var ra recoverActions
	e.runToEnd(ctx, n, every, ra.knobs)
	if !ra.has("PRECOMMITTED:heal") {
		t.Errorf("recover actions %v, want PRECOMMITTED:heal", ra.got)
	}
	e.checkExactlyOnce(n)
}

// Write's ctx bounds the call even when Doris stalls reading the body (BE
// overloaded): the write returns, the checkpoint fails and is aborted, and
// Recover resumes exactly once.
func TestWriteContextBoundsStalledBody(t *testing.T) {
	t.Parallel()
	const n, every = 20, 5
	ctx := context.Background()
	e := newEnv(t)
	lbl, _ := e.owner().Label(2)
	h := e.fault(doristest.Fault{Op: doristest.FaultStream, Label: lbl, Block: true})
	defer h.Release()
	l := e.open(func(c *loader.Config) { c.BufferSize = 16 }) // every row is a body write
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, every, every); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		for i := every; ; i++ {
			if err := l.Write(wctx, row(i)); err != nil {
				errc <- err
				return
			}
		}
	}()
	if err := h.Wait(ctx, 1); err != nil { // the BE stalls the body of checkpoint 2
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("write with a cancelled ctx: %v, want ErrNeedRecover", err)
	}
	h.Release()
	recoverTo(t, ctx, l, every)
	e.finish(ctx, l, every, n, every)
}

// Recover with a ctx that ends while the previous checkpoint's commit is
// still running returns the ctx error and keeps waiting for that commit
// next time, instead of recovering beside it.
func TestRecoverContextEndsDuringPendingCommit(t *testing.T) {
	t.Parallel()
	const n, every = 15, 5
	ctx := context.Background()
	e := newEnv(t)
	h := e.fault(doristest.Fault{Op: doristest.FaultCommit, Block: true})
	var commits atomic.Int32
	l := e.open(func(c *loader.Config) {
		c.Knobs = &loader.TestingKnobs{AfterCommit: func(uint64, error) { commits.Add(1) }}
	})
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, every, every); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Recover(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("recover with an ended ctx: %v, want context.Canceled", err)
	}
	h.Release()
	recoverTo(t, ctx, l, every) // waited for the commit
	if commits.Load() != 1 {
		t.Errorf("%d background commits finished before Recover returned, want 1", commits.Load())
	}
	e.finish(ctx, l, every, n, every)
}
