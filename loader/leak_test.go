package loader_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader"
)

// checkGoroutinesBack polls (a bounded loop on the condition, no sleep)
// until the process runs at most base goroutines again, and fails with
// their stacks if it does not within the bound.
func checkGoroutinesBack(t *testing.T, base int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if runtime.NumGoroutine() <= base {
			return
		}
		runtime.Gosched()
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	t.Fatalf("%d goroutines, %d before the test:\n%s", runtime.NumGoroutine(), base, buf)
}

// No goroutine (Stream Load, background commit, HTTP connection kept by an
// unclosed response body) outlives a Loader or Participant: after Close,
// after a crash at each cut point, with a checkpoint open at Close, and
// after Participant aborts. Not parallel: it counts the process's
// goroutines, and runs before the parallel tests are released.
func TestNoGoroutineLeak(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(t *testing.T, e *env){
		"close": func(t *testing.T, e *env) { e.runToEnd(ctx, 20, 5) },
		"close-open-checkpoint": func(t *testing.T, e *env) {
			l := e.open()
			recoverTo(t, ctx, l, 0)
			if err := drive(ctx, l, 0, 5, 5); err != nil {
				t.Fatal(err)
			}
			writeRows(t, ctx, l, 5, 8)
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
		},
		"participant": func(t *testing.T, e *env) {
			p := newParticipant(t, e)
			target := loader.Target{DB: testDB, Table: e.table, Format: "json"}
			open, err := p.Begin(ctx, "app:events:0:1", target)
			if err != nil {
				t.Fatal(err)
			}
			if err := open.Write(row(1)); err != nil {
				t.Fatal(err)
			}
			if err := open.Abort(ctx); err != nil {
				t.Fatal(err)
			}
			tx, err := p.Begin(ctx, "app:events:0:2", target)
			if err != nil {
				t.Fatal(err)
			}
			writeTxn(t, tx, 0, 3)
			c, err := tx.Precommit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
		},
		// A Participant's Begin ctx bounds the load: ending it without an
		// Abort ends the load's goroutines too.
		"participant-ctx-ended": func(t *testing.T, e *env) {
			p := newParticipant(t, e)
			bctx, cancel := context.WithCancel(ctx)
			tx, err := p.Begin(bctx, "app:events:0:1", loader.Target{DB: testDB, Table: e.table, Format: "json"})
			if err != nil {
				t.Fatal(err)
			}
			writeTxn(t, tx, 0, 3)
			cancel() // the txn is dropped: neither precommitted nor aborted
			if got := tx.Rows(); got != 3 {
				t.Fatalf("txn holds %d rows, want 3", got)
			}
		},
	}
	for _, fp := range loader.AllFailpoints {
		cases["crash-"+fp] = func(t *testing.T, e *env) {
			e.crashRun(ctx, crashAt(t, fp, 0), 20, 5)
		}
	}
	// Compressed bodies (compress_test.go): the compressor runs on the
	// transport's reads and adds no goroutine of its own.
	cases["compressed-close"] = func(t *testing.T, e *env) {
		e.compress = "gz"
		e.runToEnd(ctx, 20, 5)
	}
	cases["compressed-ctx-ended-mid-body"] = ctxEndedMidBody
	for _, fp := range []string{loader.FailMidStream, loader.FailAfterPrecommit} {
		cases["compressed-crash-"+fp] = func(t *testing.T, e *env) {
			e.compress = "lz4"
			e.crashRun(ctx, crashAt(t, fp, 0), 20, 5, func(c *loader.Config) { c.BufferSize = 64 })
		}
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			e := newEnv(t)
			run(t, e)
			e.client.Close()
			e.srv.Close()
			checkGoroutinesBack(t, base)
		})
	}
}

// writeTxn writes records [from, to) to a Participant's txn.
func writeTxn(t *testing.T, tx *loader.Txn, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := tx.Write(row(i)); err != nil {
			t.Fatalf("write record %d to %s: %v", i, tx.Label(), err)
		}
	}
}
