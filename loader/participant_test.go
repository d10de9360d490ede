package loader_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

func newParticipant(t *testing.T, e *env) *loader.Participant {
	t.Helper()
	p, err := loader.NewParticipant(e.client, loader.WithRetry(loader.Retry{Initial: 1e6, Max: 5e6, MaxElapsed: 5e9}),
		loader.WithBufferSize(64)) // tiny buffer: many body writes
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParticipantCommitIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	p := newParticipant(t, e)
	target := loader.Target{DB: testDB, Table: e.table, Format: "json"}
	tx, err := p.Begin(ctx, "app:events:0:1", target)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := tx.Write(row(i)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := tx.Precommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Result().NumberLoadedRows != 20 {
		t.Errorf("loaded %d rows", tx.Result().NumberLoadedRows)
	}
	// The committable survives a JSON round trip (the coordinator's log).
	b, _ := json.Marshal(c)
	var c2 loader.Committable
	if err := json.Unmarshal(b, &c2); err != nil || c2 != c {
		t.Fatalf("round trip %s: %+v %v", b, c2, err)
	}
	if got := e.counts(); len(got) != 0 {
		t.Fatalf("rows visible before commit: %v", got)
	}
	for range 2 { // second commit: already committed → nil (docs/doris-facts.md §3.3)
		if err := p.Commit(ctx, c2); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Recover(ctx, []loader.Committable{c2}); err != nil {
		t.Fatal(err)
	}
	if err := p.Abort(ctx, c2); !errors.Is(err, doris.ErrTxnAlreadyCommitted) {
		t.Errorf("abort of a committed txn: %v", err)
	}
	e.checkExactlyOnce(20)
}

func TestParticipantAbortAndRecoverAborted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	p := newParticipant(t, e)
	target := loader.Target{DB: testDB, Table: e.table, Format: "json"}

	// Abort of an open txn, twice.
	tx, _ := p.Begin(ctx, "app:events:0:1", target)
	tx.Write(row(1))
	for range 2 {
		if err := tx.Abort(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Precommitted, then timed out by Doris (docs/doris-facts.md §5): Recover
	// reports it as aborted, naming the label; Abort is a no-op.
	tx, _ = p.Begin(ctx, "app:events:0:2", target)
	tx.Write(row(2))
	c, err := tx.Precommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.TimeoutPrecommitted()
	err = p.Recover(ctx, []loader.Committable{c})
	var ae *loader.AbortedError
	if !errors.As(err, &ae) || ae.Label != c.Label || ae.Reason == "" {
		t.Fatalf("Recover of an aborted txn: %v", err)
	}
	if err := p.Abort(ctx, c); err != nil {
		t.Errorf("abort of an aborted txn: %v", err)
	}
	if got := e.counts(); len(got) != 0 {
		t.Errorf("rows visible: %v", got)
	}
	e.checkNoRunningTxn()
	if _, err := p.Begin(ctx, "bad label!", target); err == nil {
		t.Error("invalid label accepted")
	}
}
