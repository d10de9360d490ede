package loader_test

import (
	"context"
	"errors"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// CommitFailed (issue 11, heal at once): the channel closes when the
// background commit of a decided checkpoint finds its txn aborted by Doris
// ("timeout by txn manager", docs/doris-facts.md §5), without any further Write
// or Checkpoint; Recover then heals the checkpoint (its start is returned)
// and hands out a new, open channel. Close ending a commit does not close
// it.
func TestCommitFailedSignalsAbortedDecision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	fps := loader.NewFailpoints()
	h, err := fps.Arm(loader.FailMidCommit, loader.Block().Times(1))
	if err != nil {
		t.Fatal(err)
	}
	l := e.open(func(c *loader.Config) { c.Failpoints = fps })
	defer l.Close(ctx)
	recoverTo(t, ctx, l, 0)
	first := l.CommitFailed()
	if err := drive(ctx, l, 0, 5, 5); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first:
		t.Fatal("CommitFailed closed before the commit failed")
	default:
	}
	e.srv.TimeoutPrecommitted()
	h.Release()
	<-first // closed by the failed commit alone
	recoverTo(t, ctx, l, 0)
	again := l.CommitFailed()
	if again == first {
		t.Fatal("Recover kept the closed channel")
	}
	e.finish(ctx, l, 0, 5, 5)
	select {
	case <-again:
		t.Fatal("CommitFailed closed after a successful heal")
	default:
	}
}

// A commit cut short by Close is not a commit failure.
func TestCommitFailedNotOnClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	fps := loader.NewFailpoints()
	if _, err := fps.Arm(loader.FailMidCommit, loader.Block()); err != nil {
		t.Fatal(err)
	}
	l := e.open(func(c *loader.Config) { c.Failpoints = fps })
	recoverTo(t, ctx, l, 0)
	ch := l.CommitFailed()
	if err := drive(ctx, l, 0, 3, 3); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Close(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with an ended ctx while the commit is blocked: %v, want context.Canceled", err)
	}
	select {
	case <-ch:
		t.Fatal("CommitFailed closed by Close")
	default:
	}
}
