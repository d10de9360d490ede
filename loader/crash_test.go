package loader_test

import (
	"context"
	"errors"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// crashRun drives records [0, n) on a loader armed with fps until it
// crashes; it fails the test if the loader never crashed.
func (e *env) crashRun(ctx context.Context, fps *loader.Failpoints, n, every int, mut ...func(*loader.Config)) {
	e.t.Helper()
	l := e.open(append(mut, func(c *loader.Config) { c.Failpoints = fps })...)
	p, err := l.Recover(ctx)
	if err == nil {
		err = drive(ctx, l, next(e.t, p), n, every)
	}
	cerr := l.Close(ctx) // waits for the crashed loader's goroutines
	if !errors.Is(err, loader.ErrCrashed) && !errors.Is(cerr, loader.ErrCrashed) {
		e.t.Fatalf("loader did not crash: drive: %v, close: %v", err, cerr)
	}
	if _, err := l.Recover(ctx); !errors.Is(err, loader.ErrCrashed) {
		e.t.Fatalf("Recover after crash: %v, want ErrCrashed", err)
	}
}

// TestCrashAtEveryFailpoint: for every cut point of docs/design.md §2, crash
// there (at the first hit and at a later cycle), reopen on the same store
// and emulator, recover, finish, and compare the table with the source.
func TestCrashAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	const n, every = 40, 6
	for _, fp := range loader.AllFailpoints {
		for _, skip := range []int{0, 2} {
			if fp == loader.FailBeforeAnnounce && skip > 0 {
				continue // fires once per Recover: in steady state announcements ride on decisions
			}
			for _, table := range []string{"events", "events_u"} {
				t.Run(fp+"/skip"+string(rune('0'+skip))+"/"+table, func(t *testing.T) {
					t.Parallel()
					ctx := context.Background()
					e := newEnv(t)
					e.table = table
					fps := loader.NewFailpoints()
					h, err := fps.Arm(fp, loader.Crash().Skip(skip))
					if err != nil {
						t.Fatal(err)
					}
					e.crashRun(ctx, fps, n, every)
					if h.Hits() != 1 || fps.Hits(fp) != skip+1 {
						t.Fatalf("failpoint %s acted %d times, passed %d times", fp, h.Hits(), fps.Hits(fp))
					}
					e.runToEnd(ctx, n, every)
					e.checkExactlyOnce(n)
				})
			}
		}
	}
}

// TestErrorAtEveryFailpoint: an injected error at each cut point fails
// (or, inside the commit loop, delays) one checkpoint; the same loader
// recovers and finishes exactly once.
func TestErrorAtEveryFailpoint(t *testing.T) {
	t.Parallel()
	const n, every = 40, 6
	for _, fp := range loader.AllFailpoints {
		t.Run(fp, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			fps := loader.NewFailpoints()
			h, err := fps.Arm(fp, loader.ReturnError(nil).Times(1).Skip(1))
			if err != nil {
				t.Fatal(err)
			}
			if fp == loader.FailBeforeAnnounce {
				h, _ = fps.Arm(fp, loader.ReturnError(nil).Times(1))
			}
			e.runToEnd(ctx, n, every, func(c *loader.Config) { c.Failpoints = fps })
			if h.Hits() != 1 {
				t.Fatalf("failpoint %s acted %d times", fp, h.Hits())
			}
			e.checkExactlyOnce(n)
		})
	}
}
