package loader_test

import (
	"context"
	"errors"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
	"github.com/doris-sink/doris-sink/loader"
)

// A precommit that never gets an answer (the emulator's Block on
// "precommit": the txn stays PREPARE, the BE never replies) holds
// Checkpoint until the caller gives up (SIGTERM, a deadline). The
// checkpoint's abort then used the ended ctx and failed, leaving the PREPARE
// txn running until Doris's load timeout (docs/doris-facts.md §5, 3 days) unless
// the job started again. Doris aborts a PREPARE txn by label (docs/doris-facts.md
// §3.3): the loader must do it right there, without a Recover.
func TestPrecommitNeverAnsweredIsAbortedWhenTheCallerGivesUp(t *testing.T) {
	t.Parallel()
	const rows = 4
	ctx := context.Background()
	e := newEnv(t)
	h := e.fault(doristest.Fault{Op: doristest.FaultPrecommit, DB: testDB, Block: true})
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	writeRows(t, ctx, l, 0, rows)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Checkpoint(cctx, pos(rows)) }()
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	lbl := e.txnsByStatus(doris.TxnPrepare)
	if len(lbl) != 1 {
		t.Fatalf("while the precommit hangs: PREPARE txns %v, want one", lbl)
	}
	cancel()
	if err := <-done; !errors.Is(err, loader.ErrNeedRecover) || !errors.Is(err, context.Canceled) {
		t.Fatalf("checkpoint: %v, want ErrNeedRecover wrapping context.Canceled", err)
	}
	// No Recover yet: the txn is already aborted, by the user (the loader).
	txns, err := e.srv.Txns(testDB)
	if err != nil {
		t.Fatal(err)
	}
	if len(txns) != 1 || txns[0].Label != lbl[0] || txns[0].Status != doris.TxnAborted {
		t.Fatalf("after the checkpoint gave up: %+v, want %s ABORTED", txns, lbl[0])
	}
	h.Remove()
	recoverTo(t, ctx, l, 0)
	e.finish(ctx, l, 0, rows, rows)
}

// txnsByStatus returns the labels of e's txns in status st.
func (e *env) txnsByStatus(st doris.TxnStatus) []string {
	e.t.Helper()
	txns, err := e.srv.Txns(testDB)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, tx := range txns {
		if tx.Status == st {
			out = append(out, tx.Label)
		}
	}
	return out
}

// A BE that dies during precommit (the emulator's Refuse on "precommit":
// the connection closes, the txn stays PREPARE) fails the checkpoint, and
// the loader aborts the PREPARE txn by label at once (docs/doris-facts.md §3.3),
// before any Recover: nothing lingers until Doris's load timeout. This is
// why the chaos campaign may inject it.
func TestPrecommitRefusedIsAbortedAtOnce(t *testing.T) {
	t.Parallel()
	const rows = 4
	ctx := context.Background()
	e := newEnv(t)
	h := e.fault(doristest.Fault{Op: doristest.FaultPrecommit, DB: testDB, Refuse: true})
	l := e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	writeRows(t, ctx, l, 0, rows)
	if err := l.Checkpoint(ctx, pos(rows)); !errors.Is(err, loader.ErrNeedRecover) {
		t.Fatalf("checkpoint: %v, want ErrNeedRecover", err)
	}
	if h.Hits() != 1 {
		t.Fatalf("precommit fault hit %d times, want 1", h.Hits())
	}
	if lbl := e.txnsByStatus(doris.TxnPrepare); len(lbl) != 0 {
		t.Fatalf("after the refused precommit: PREPARE txns %v, want none (aborted by the loader)", lbl)
	}
	if lbl := e.txnsByStatus(doris.TxnAborted); len(lbl) != 1 {
		t.Fatalf("after the refused precommit: ABORTED txns %v, want one", lbl)
	}
	recoverTo(t, ctx, l, 0)
	e.finish(ctx, l, 0, rows, rows)
}
