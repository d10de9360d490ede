package loader_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// Review P1: the first decision of a new store recorded a nil start, so
// healing it (Doris aborted its txn: "timeout by txn manager",
// docs/doris-facts.md §5, the emulator's TimeoutPrecommitted) made Recover
// return nil, as for a new store. With SetStart the decision records the
// caller's first start and the heal returns it.
func TestSetStartFirstDecisionHealReturnsStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	fps := loader.NewFailpoints()
	h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	l := e.open(func(c *loader.Config) { c.Failpoints = fps })
	if err := l.SetStart(pos(3)); !errors.Is(err, loader.ErrNotRecovered) {
		t.Fatalf("SetStart before Recover: %v, want ErrNotRecovered", err)
	}
	if p, err := l.Recover(ctx); err != nil || p != nil {
		t.Fatalf("recover a new store: %s, %v", p, err)
	}
	if err := l.SetStart([]byte("{")); err == nil {
		t.Fatal("SetStart accepted invalid JSON")
	}
	if err := l.SetStart(pos(3)); err != nil {
		t.Fatal(err)
	}
	writeRows(t, ctx, l, 3, 6)
	if err := l.Checkpoint(ctx, pos(6)); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.TimeoutPrecommitted(); n != 1 {
		t.Fatalf("timed out %d txns, want 1", n)
	}
	h.Release()
	_ = l.Close(ctx) // the commit failed: Doris aborted the txn

	l = e.open()
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 3) // healing checkpoint 1: its start, not nil
	err = l.SetStart(pos(0))
	if err == nil || !strings.Contains(err.Error(), "decision 1") {
		t.Fatalf("SetStart with a decision in the store: %v, want a refusal naming decision 1", err)
	}
	writeRows(t, ctx, l, 3, 6)
	if err := l.Checkpoint(ctx, pos(6)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	counts := e.counts()
	if len(counts) != 3 || counts[3] != 1 || counts[4] != 1 || counts[5] != 1 {
		t.Fatalf("rows %v, want ids 3, 4, 5 once", counts)
	}
}
