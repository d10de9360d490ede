package loader_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// Identity checks (docs/design.md §2): a decided label is resolved and
// committed by the decided txn id, never by label alone. get_load_state
// reports the label's newest txn (docs/doris-facts.md §6.1) and an ABORTED
// txn frees its label at once (§4), so a second writer (or an undecided
// heal attempt) can hold a decided label under another txn id. Each case
// runs over HTTP only (the holder's txn id read from a probe's Label
// Already Exists answer, §2.5) and with MySQL (SHOW TRANSACTION, §6.2).

// identityModes are the two ways the loader reads a label's txn id.
var identityModes = []string{"http", "mysql"}

// txnCalls wraps a client (embedded: SHOW TRANSACTION and MySQLConfigured
// stay visible to the loader) and records aborts by label and by id.
type txnCalls struct {
	*doris.Client
	mu          sync.Mutex
	abortLabels []string
	abortTxns   []int64
	// commit, when set, runs instead of the next CommitTxn (once).
	commit func(ctx context.Context, db string, txnID int64) error
	// loadState, when set, may answer a LoadState instead of Doris (ok).
	loadState func(lbl string) (doris.TxnStatus, bool)
	loads     []string // labels of the Stream Loads sent
}

func (c *txnCalls) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	c.mu.Lock()
	c.loads = append(c.loads, req.Label)
	c.mu.Unlock()
	return c.Client.StreamLoad(ctx, req, body)
}

func (c *txnCalls) LoadState(ctx context.Context, db, lbl string) (doris.TxnStatus, error) {
	c.mu.Lock()
	hook := c.loadState
	c.mu.Unlock()
	if hook != nil {
		if st, ok := hook(lbl); ok {
			return st, nil
		}
	}
	return c.Client.LoadState(ctx, db, lbl)
}

// reset forgets the calls recorded so far.
func (c *txnCalls) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.abortLabels, c.abortTxns, c.loads = nil, nil, nil
}

func (c *txnCalls) loadsOf(lbl string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.loads {
		if l == lbl {
			n++
		}
	}
	return n
}

func (c *txnCalls) AbortLabel(ctx context.Context, db, lbl string) error {
	c.mu.Lock()
	c.abortLabels = append(c.abortLabels, lbl)
	c.mu.Unlock()
	return c.Client.AbortLabel(ctx, db, lbl)
}

func (c *txnCalls) AbortTxn(ctx context.Context, db string, id int64) error {
	c.mu.Lock()
	c.abortTxns = append(c.abortTxns, id)
	c.mu.Unlock()
	return c.Client.AbortTxn(ctx, db, id)
}

func (c *txnCalls) CommitTxn(ctx context.Context, db string, id int64) error {
	c.mu.Lock()
	hook := c.commit
	c.commit = nil
	c.mu.Unlock()
	if hook != nil {
		return hook(ctx, db, id)
	}
	return c.Client.CommitTxn(ctx, db, id)
}

func (c *txnCalls) abortedByLabel(lbl string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.abortLabels, lbl)
}

func (c *txnCalls) abortedByID(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.abortTxns, id)
}

// identityEnv returns an env whose loaders use a recording client, with
// MySQL when mode is "mysql".
func identityEnv(t *testing.T, mode string) (*env, *txnCalls) {
	t.Helper()
	e := newEnv(t)
	cfg := doris.Config{FE: []string{e.srv.FEURL()}, User: "root", MaxRetries: -1,
		RequestTimeout: 10 * time.Second, LoadTimeout: 30 * time.Second}
	if mode == "mysql" {
		cfg.MySQL = e.srv.MySQLAddr()
	}
	c, err := doris.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	calls := &txnCalls{Client: c}
	e.doris = calls
	return e, calls
}

// decideAndCrash runs records [0, 30) in checkpoints of 5 and crashes right
// after checkpoint 2 ([5, 10)) was decided: its txn is PRECOMMITTED. It
// returns that txn.
func (e *env) decideAndCrash(ctx context.Context) checkpoint.Txn {
	e.t.Helper()
	e.crashRun(ctx, crashAt(e.t, loader.FailAfterDecide, 1), 30, 5)
	st, err := checkpoint.ReadFile(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	if st.Decided == nil || st.Decided.ID != 2 || st.Decided.Committed || len(st.Decided.Txns) != 1 {
		e.t.Fatalf("decided %+v, want checkpoint 2 uncommitted with one txn", st.Decided)
	}
	return st.Decided.Txns[0]
}

// foreignLoad loads records [from, to) into label lbl of e's table as
// another writer would: precommitted with twoPC, else committed. It
// returns the txn id.
func (e *env) foreignLoad(ctx context.Context, lbl string, twoPC bool, from, to int) int64 {
	e.t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		b.Write(row(i))
		b.WriteByte('\n')
	}
	res, err := e.client.StreamLoad(ctx, doris.LoadRequest{DB: testDB, Table: e.table, Label: lbl, Format: "json",
		ReadJSONByLine: true, TwoPhaseCommit: twoPC}, strings.NewReader(b.String()))
	if err != nil {
		e.t.Fatalf("foreign load of label %s: %v", lbl, err)
	}
	return res.TxnID
}

// A decided label that Doris holds VISIBLE under another txn than the
// decided one (the decided txn was aborted, a second writer loaded the
// label) is an IdentityError naming both txn ids, never "done".
func TestRecoverDecidedLabelVisibleUnderAnotherTxn(t *testing.T) {
	t.Parallel()
	for _, mode := range identityModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, _ := identityEnv(t, mode)
			dt := e.decideAndCrash(ctx)
			if err := e.client.AbortTxn(ctx, testDB, dt.TxnID); err != nil {
				t.Fatal(err)
			}
			other := e.foreignLoad(ctx, dt.Label, false, 1000, 1003)
			l := e.open()
			defer l.Close(ctx)
			_, err := l.Recover(ctx)
			var ie *loader.IdentityError
			if !errors.As(err, &ie) || !errors.Is(err, checkpoint.ErrFenced) {
				t.Fatalf("recover: %v, want *IdentityError wrapping checkpoint.ErrFenced", err)
			}
			if ie.CheckpointID != 2 || ie.Label != dt.Label || ie.DecidedTxnID != dt.TxnID || ie.FoundTxnID != other ||
				ie.FoundState != doris.TxnVisible || ie.Table != testDB+"."+e.table {
				t.Fatalf("identity error %+v, want checkpoint 2 label %s decided txn %d found txn %d VISIBLE",
					ie, dt.Label, dt.TxnID, other)
			}
			for _, want := range []string{dt.Label, fmt.Sprint(dt.TxnID), fmt.Sprint(other)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
			st, err := checkpoint.ReadFile(e.dir)
			if err != nil {
				t.Fatal(err)
			}
			if st.Decided.Committed {
				t.Error("the decision was marked committed")
			}
		})
	}
}

// A decided label PRECOMMITTED (or PREPARE) under another txn than the
// decided one is an undecided attempt: it is aborted by its own txn id,
// never by label, and the decided checkpoint is healed.
func TestRecoverDecidedLabelRunningUnderAnotherTxn(t *testing.T) {
	t.Parallel()
	for _, state := range []doris.TxnStatus{doris.TxnPrecommitted, doris.TxnPrepare} {
		for _, mode := range identityModes {
			t.Run(string(state)+"/"+mode, func(t *testing.T) {
				t.Parallel()
				const n = 30
				ctx := context.Background()
				e, calls := identityEnv(t, mode)
				dt := e.decideAndCrash(ctx)
				if err := e.client.AbortTxn(ctx, testDB, dt.TxnID); err != nil {
					t.Fatal(err)
				}
				var other int64
				if state == doris.TxnPrecommitted {
					other = e.foreignLoad(ctx, dt.Label, true, 1000, 1003)
				} else {
					// The BE begins the txn and the connection drops: PREPARE.
					e.fault(doristest.Fault{Op: doristest.FaultBegin, DB: testDB, Label: dt.Label, ApplyThenDrop: true})
					_, err := e.client.StreamLoad(ctx, doris.LoadRequest{DB: testDB, Table: e.table, Label: dt.Label,
						Format: "json", TwoPhaseCommit: true}, strings.NewReader(string(row(1000))))
					if err == nil {
						t.Fatal("the dropped load succeeded")
					}
					tx, terr := e.srv.TxnByLabel(testDB, dt.Label)
					if terr != nil || tx.Status != doris.TxnPrepare {
						t.Fatalf("label %s: %+v %v, want PREPARE", dt.Label, tx, terr)
					}
					other = tx.ID
				}
				if other == dt.TxnID {
					t.Fatal("the other attempt reused the decided txn id")
				}
				l := e.open()
				defer l.Close(ctx)
				recoverTo(t, ctx, l, 5)
				if !calls.abortedByID(other) {
					t.Errorf("txn %d was not aborted by id (aborts by id %v)", other, calls.abortTxns)
				}
				if calls.abortedByLabel(dt.Label) {
					t.Errorf("decided label %s was aborted by label", dt.Label)
				}
				if tx, err := e.srv.TxnByID(testDB, other); err != nil || tx.Status != doris.TxnAborted {
					t.Errorf("other txn: %+v %v, want ABORTED", tx, err)
				}
				e.finish(ctx, l, 5, n, 5)
			})
		}
	}
}

// The background commit of a decided txn whose answer is lost: the label
// lookup then says VISIBLE, but another txn committed it (the decided one
// was aborted meanwhile). The commit is not taken as done: it is retried
// by id, answered "aborted", and the next Recover stops with an
// IdentityError. Likewise a commit answered "txn not found" while the label
// is VISIBLE.
func TestCommitAmbiguousLabelVisibleUnderAnotherTxn(t *testing.T) {
	t.Parallel()
	answers := map[string]error{
		"lost":      &doris.TxnError{Op: "commit", Code: "HTTP 502", Message: "bad gateway"},
		"not-found": &doris.TxnError{Op: "commit", Code: "ANALYSIS_ERROR", Message: "transaction not found"},
	}
	for _, name := range []string{"lost", "not-found"} {
		for _, mode := range identityModes {
			t.Run(name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				e, calls := identityEnv(t, mode)
				var other int64
				var decided checkpoint.Txn
				calls.commit = func(ctx context.Context, db string, id int64) error {
					st, err := checkpoint.ReadFile(e.dir)
					if err != nil {
						return err
					}
					decided = st.Decided.Txns[0]
					if err := e.client.AbortTxn(ctx, db, id); err != nil {
						return err
					}
					other = e.foreignLoad(ctx, decided.Label, false, 1000, 1003)
					if name == "not-found" {
						return fmt.Errorf("%w: %w", answers[name], doris.ErrTxnNotFound)
					}
					return answers[name]
				}
				committed := make(chan error, 1)
				l := e.open(func(c *loader.Config) {
					c.Knobs = &loader.TestingKnobs{AfterCommit: func(id uint64, err error) {
						if id == 1 {
							committed <- err
						}
					}}
				})
				defer l.Close(ctx)
				recoverTo(t, ctx, l, 0)
				writeRows(t, ctx, l, 0, 5)
				if err := l.Checkpoint(ctx, pos(5)); err != nil {
					t.Fatal(err)
				}
				cerr := <-committed
				if cerr == nil {
					t.Fatal("the commit of checkpoint 1 succeeded although its txn was aborted and the label loaded by another")
				}
				if name == "not-found" {
					var ie *loader.IdentityError
					if !errors.As(cerr, &ie) || ie.CheckpointID != 1 || ie.DecidedTxnID != decided.TxnID {
						t.Fatalf("commit: %v, want *IdentityError of checkpoint 1 txn %d", cerr, decided.TxnID)
					}
				}
				st, err := checkpoint.ReadFile(e.dir)
				if err != nil {
					t.Fatal(err)
				}
				if st.Decided.Committed {
					t.Fatal("checkpoint 1 was marked committed")
				}
				_, err = l.Recover(ctx)
				var ie *loader.IdentityError
				if !errors.As(err, &ie) || ie.FoundTxnID != other || ie.DecidedTxnID != decided.TxnID {
					t.Fatalf("recover: %v, want *IdentityError decided %d found %d", err, decided.TxnID, other)
				}
			})
		}
	}
}

// A running txn under this job's prefix and scope that the store never
// announced is a second writer: Recover refuses and aborts nothing. A
// running txn of another scope of the prefix (another member), or of a
// table this store does not write (another store of the job name, one per
// table), is left alone. Needs SHOW TRANSACTION (MySQL).
func TestRecoverRefusesSecondWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, calls := identityEnv(t, "mysql")
	l := e.open()
	recoverTo(t, ctx, l, 0)
	if err := drive(ctx, l, 0, 10, 5); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ownScope, err := e.owner().Label(7)
	if err != nil {
		t.Fatal(err)
	}
	otherOwner := e.owner()
	otherOwner.Writer = "member-2"
	otherScope, err := otherOwner.Label(1)
	if err != nil {
		t.Fatal(err)
	}
	otherID := e.foreignLoad(ctx, otherScope, true, 2000, 2002)
	// Another store of the job name, writing another table in scope 0.
	otherTable := e.owner()
	otherTable.Table = "events_u"
	otherTableLabel, err := otherTable.Label(7)
	if err != nil {
		t.Fatal(err)
	}
	e.table = "events_u"
	otherTableID := e.foreignLoad(ctx, otherTableLabel, true, 3000, 3002)
	e.table = "events"
	// Another scope and another table only: recovered, their txns untouched.
	l = e.open()
	recoverTo(t, ctx, l, 10)
	l.Close(ctx)
	for _, id := range []int64{otherID, otherTableID} {
		if tx, err := e.srv.TxnByID(testDB, id); err != nil || tx.Status != doris.TxnPrecommitted {
			t.Fatalf("txn %d of another scope or table: %+v %v, want PRECOMMITTED (left alone)", id, tx, err)
		}
	}
	ownID := e.foreignLoad(ctx, ownScope, true, 1000, 1002)
	l = e.open()
	defer l.Close(ctx)
	_, err = l.Recover(ctx)
	var sw *loader.SecondWriterError
	if !errors.As(err, &sw) || !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("recover: %v, want *SecondWriterError wrapping checkpoint.ErrFenced", err)
	}
	if sw.Label != ownScope || sw.TxnID != ownID || sw.State != doris.TxnPrecommitted || sw.Scope != "0" {
		t.Fatalf("second writer %+v, want label %s txn %d PRECOMMITTED scope 0", sw, ownScope, ownID)
	}
	if !strings.Contains(err.Error(), "a second writer uses this job's prefix, or the store was rolled back") {
		t.Errorf("error %q does not say the causes", err)
	}
	for _, id := range []int64{ownID, otherID} {
		if tx, err := e.srv.TxnByID(testDB, id); err != nil || tx.Status != doris.TxnPrecommitted {
			t.Errorf("txn %d: %+v %v, want PRECOMMITTED (nothing aborted)", id, tx, err)
		}
		if calls.abortedByID(id) {
			t.Errorf("txn %d was aborted", id)
		}
	}
}

// The decided txn is not found (aborted, then cleaned) while its label is
// VISIBLE: the label may have been another writer's, or the decided txn's
// own that expired just now. Either way no probe load is sent (it would
// begin a txn and make the label read ABORTED, then healed): an
// IdentityError, naming the found txn when SHOW TRANSACTION can read it.
func TestRecoverDecidedTxnNotFoundLabelVisibleSendsNoProbe(t *testing.T) {
	t.Parallel()
	for _, mode := range identityModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e, calls := identityEnv(t, mode)
			dt := e.decideAndCrash(ctx)
			calls.reset()
			if err := e.client.AbortTxn(ctx, testDB, dt.TxnID); err != nil {
				t.Fatal(err)
			}
			other := e.foreignLoad(ctx, dt.Label, false, 1000, 1003)
			calls.commit = func(ctx context.Context, db string, id int64) error {
				return fmt.Errorf("%w: %w", &doris.TxnError{Op: "commit", DB: db, TxnID: id, Code: "ANALYSIS_ERROR",
					Message: fmt.Sprintf("transaction [%d] not found", id)}, doris.ErrTxnNotFound)
			}
			l := e.open()
			defer l.Close(ctx)
			_, err := l.Recover(ctx)
			var ie *loader.IdentityError
			if !errors.As(err, &ie) || ie.DecidedTxnID != dt.TxnID {
				t.Fatalf("recover: %v, want *IdentityError of txn %d", err, dt.TxnID)
			}
			want := int64(0)
			if mode == "mysql" {
				want = other
			}
			if ie.FoundTxnID != want {
				t.Errorf("found txn %d, want %d", ie.FoundTxnID, want)
			}
			if n := calls.loadsOf(dt.Label); n != 0 {
				t.Errorf("%d probe loads of label %s sent", n, dt.Label)
			}
		})
	}
}

// The holder of a decided label aborts between the label lookup and the
// probe (here: the lookup answers PRECOMMITTED, but the label is free): the
// probe load begins a txn, which is aborted by its id before the heal.
func TestRecoverProbeThatBeganATxnAbortsIt(t *testing.T) {
	t.Parallel()
	const n = 30
	ctx := context.Background()
	e, calls := identityEnv(t, "http")
	dt := e.decideAndCrash(ctx)
	calls.reset()
	if err := e.client.AbortTxn(ctx, testDB, dt.TxnID); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	calls.loadState = func(lbl string) (doris.TxnStatus, bool) {
		hit := false
		if lbl == dt.Label {
			once.Do(func() { hit = true })
		}
		return doris.TxnPrecommitted, hit
	}
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 5)
	if calls.loadsOf(dt.Label) != 1 {
		t.Fatalf("%d probe loads of %s, want 1", calls.loadsOf(dt.Label), dt.Label)
	}
	probe, err := e.srv.TxnByLabel(testDB, dt.Label)
	if err != nil || probe.ID == dt.TxnID || probe.Status != doris.TxnAborted || !calls.abortedByID(probe.ID) {
		t.Fatalf("probe txn %+v %v, want a new txn aborted by its id (aborts by id %v)", probe, err, calls.abortTxns)
	}
	if calls.abortedByLabel(dt.Label) {
		t.Errorf("decided label %s was aborted by label", dt.Label)
	}
	e.finish(ctx, l, 5, n, 5)
}

// A heal's decision records the heal's new txn id: recovery after a crash
// right after that decision commits the heal's txn by that id (the latest
// decided one), not the first, aborted one, and does not heal again.
func TestRecoverCommitsTheHealsTxnID(t *testing.T) {
	t.Parallel()
	for _, mode := range identityModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			const n = 30
			ctx := context.Background()
			e, calls := identityEnv(t, mode)
			dt := e.decideAndCrash(ctx)
			if e.srv.TimeoutPrecommitted() != 1 {
				t.Fatal("no precommitted txn to time out")
			}
			// Heal checkpoint 2, crash right after its decision.
			e.crashRun(ctx, crashAt(t, loader.FailAfterDecide, 0), n, 5)
			st, err := checkpoint.ReadFile(e.dir)
			if err != nil {
				t.Fatal(err)
			}
			ht := st.Decided.Txns[0]
			if st.Decided.ID != 2 || ht.Healed != 1 || ht.TxnID == dt.TxnID || ht.Committed {
				t.Fatalf("after the heal's decision: %+v, want checkpoint 2 healed once under a new txn id", ht)
			}
			calls.reset()
			var acts recoverActions
			l := e.open(acts.knobs)
			defer l.Close(ctx)
			recoverTo(t, ctx, l, 10)
			if !acts.has("PRECOMMITTED:commit") || acts.has("PRECOMMITTED:heal") {
				t.Errorf("recovery actions %v, want the heal's txn committed", acts.got)
			}
			if tx, err := e.srv.TxnByID(testDB, ht.TxnID); err != nil || tx.Status != doris.TxnVisible {
				t.Errorf("heal txn %d: %+v %v, want VISIBLE", ht.TxnID, tx, err)
			}
			if len(calls.abortTxns) != 0 || len(calls.abortLabels) != 0 {
				t.Errorf("aborts by id %v, by label %v, want none", calls.abortTxns, calls.abortLabels)
			}
			e.finish(ctx, l, 10, n, 5)
		})
	}
}

// With MySQL configured but SHOW TRANSACTION failing, the identity checks
// fall back to what works over HTTP: the second-writer listing is skipped
// (logged), and the txn id holding a decided label is read from a probe's
// Label Already Exists answer, so the undecided attempt is still aborted
// by its id.
func TestIdentityChecksWhenShowTransactionFails(t *testing.T) {
	t.Parallel()
	const n = 30
	ctx := context.Background()
	e, calls := identityEnv(t, "mysql")
	dt := e.decideAndCrash(ctx)
	if err := e.client.AbortTxn(ctx, testDB, dt.TxnID); err != nil {
		t.Fatal(err)
	}
	other := e.foreignLoad(ctx, dt.Label, true, 1000, 1003)
	calls.reset()
	h := e.fault(doristest.Fault{Op: doristest.FaultShowTxn, Count: -1, Err: &doristest.FaultErr{Message: "show refused"}})
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 5)
	if h.Hits() == 0 {
		t.Fatal("SHOW TRANSACTION was never asked")
	}
	if !calls.abortedByID(other) || calls.abortedByLabel(dt.Label) || calls.loadsOf(dt.Label) != 1 {
		t.Fatalf("aborts by id %v, by label %v, probe loads %d: want txn %d aborted by id after one probe",
			calls.abortTxns, calls.abortLabels, calls.loadsOf(dt.Label), other)
	}
	h.Remove()
	e.finish(ctx, l, 5, n, 5)
}
