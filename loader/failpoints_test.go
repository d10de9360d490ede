package loader_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

func TestParseFailpoints(t *testing.T) {
	t.Parallel()
	fps, err := loader.ParseFailpoints(" after-precommit=crash; mid-commit=2*error ;after-decide=1+block;mid-stream=error(boom)")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"after-decide=1+block", "after-precommit=crash", "mid-commit=2*error", "mid-stream=error(boom)"}
	if got := fps.Armed(); !slices.Equal(got, want) {
		t.Errorf("armed %v, want %v", got, want)
	}
	for _, bad := range []string{"nope=crash", "after-decide", "after-decide=explode", "after-decide=0*error"} {
		if _, err := loader.ParseFailpoints(bad); err == nil {
			t.Errorf("ParseFailpoints(%q) accepted", bad)
		}
	}
	if fps, err := loader.ParseFailpoints(""); err != nil || len(fps.Armed()) != 0 {
		t.Errorf("empty spec: %v %v", fps.Armed(), err)
	}
}

func TestArmUnknown(t *testing.T) {
	t.Parallel()
	if _, err := loader.NewFailpoints().Arm("before-everything", loader.Crash()); err == nil {
		t.Error("unknown failpoint armed")
	}
	if _, err := loader.NewFailpoints().Arm(loader.FailMidCommit, loader.Action{}); err == nil {
		t.Error("zero action armed")
	}
}

// A Block failpoint holds the cycle at its cut point until released; the
// handle's Wait observes the hit without sleeping.
func TestBlockFailpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	fps := loader.NewFailpoints()
	h, _ := fps.Arm(loader.FailBeforeDecide, loader.Block().Times(1))
	l := e.open(func(c *loader.Config) { c.Failpoints = fps })
	defer l.Close(ctx)
	if _, err := l.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- drive(ctx, l, 0, 10, 5) }()
	if err := h.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		t.Fatalf("drive finished while blocked: %v", err)
	default:
	}
	h.Release()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e.checkExactlyOnce(10)
	if fps.Hits(loader.FailBeforeDecide) != 2 {
		t.Errorf("before-decide passed %d times, want 2", fps.Hits(loader.FailBeforeDecide))
	}
}

func TestErrorsAreTyped(t *testing.T) {
	t.Parallel()
	ce := &loader.CheckpointError{ID: 3, Label: "j:d-t:0:3", Stage: "precommit", Err: loader.ErrInjected}
	if !errors.Is(ce, loader.ErrNeedRecover) || !errors.Is(ce, loader.ErrInjected) {
		t.Error("CheckpointError does not wrap ErrNeedRecover and its cause")
	}
	if !errors.Is(&loader.AbortedError{Label: "x"}, loader.ErrTxnAborted) {
		t.Error("AbortedError does not wrap ErrTxnAborted")
	}
}
