package loader

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// Fire, for programs running the protocol outside a Loader: nil passes,
// an error action returns its error, a crash runs OnCrash and returns
// ErrCrashed, and after it every hit on the same flag returns ErrCrashed
// uncounted.
func TestFireOutsideLoader(t *testing.T) {
	t.Parallel()
	var nilFP *Failpoints
	var dying atomic.Bool
	if err := nilFP.Fire(context.Background(), FailAfterDecide, nil, &dying); err != nil {
		t.Fatalf("nil Failpoints: %v", err)
	}
	fp, err := ParseFailpoints("mid-commit=error;after-decide=crash")
	if err != nil {
		t.Fatal(err)
	}
	crashedAt := ""
	fp.OnCrash(func(name string) { crashedAt = name })
	if err := fp.Fire(context.Background(), FailMidCommit, nil, &dying); !errors.Is(err, ErrInjected) {
		t.Fatalf("error action: %v, want ErrInjected", err)
	}
	if err := fp.Fire(context.Background(), FailAfterDecide, nil, &dying); !errors.Is(err, ErrCrashed) || crashedAt != FailAfterDecide {
		t.Fatalf("crash action: %v (OnCrash saw %q), want ErrCrashed after OnCrash", err, crashedAt)
	}
	before := fp.Hits(FailBeforeDecide)
	if err := fp.Fire(context.Background(), FailBeforeDecide, nil, &dying); !errors.Is(err, ErrCrashed) || fp.Hits(FailBeforeDecide) != before {
		t.Fatalf("hit after the crash: %v, hits %d→%d; want ErrCrashed, uncounted", err, before, fp.Hits(FailBeforeDecide))
	}
}
