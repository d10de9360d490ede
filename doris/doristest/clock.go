package doristest

import (
	"context"
	"sync"
	"time"
)

// Clock is the emulator's time source. Every Doris timer (PREPARE and
// PRECOMMITTED timeouts, label retention, docs/doris-facts.md §4–§5) is evaluated
// against it, so tests drive time with a ManualClock instead of sleeping.
type Clock interface {
	Now() time.Time
}

// realClock is the wall clock, the default.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that moves only when told to. The zero value is not
// usable; create one with NewManualClock. It is safe for concurrent use.
//
// Advancing the clock does not by itself change any transaction: the
// emulator evaluates its timers lazily, at the start of every request it
// serves, every state reader call, and Server.RunCleaner (see Server docs).
type ManualClock struct {
	mu       sync.Mutex
	now      time.Time
	sleepers map[*clockSleeper]struct{}
	changed  chan struct{} // closed and replaced when sleepers change
}

// clockSleeper is one goroutine waiting in ManualClock.sleepUntil.
type clockSleeper struct {
	until time.Time
	wake  chan struct{}
}

// NewManualClock returns a ManualClock reading start. A zero start means
// 2026-01-01 00:00:00 UTC.
func NewManualClock(start time.Time) *ManualClock {
	if start.IsZero() {
		start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &ManualClock{now: start, sleepers: map[*clockSleeper]struct{}{}, changed: make(chan struct{})}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (negative d is ignored) and returns the
// new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	woke := false
	for sl := range c.sleepers {
		if !c.now.Before(sl.until) {
			close(sl.wake)
			delete(c.sleepers, sl)
			woke = true
		}
	}
	if woke {
		c.notifyLocked()
	}
	return c.now
}

// notifyLocked wakes WaitSleepers callers. Callers hold c.mu.
func (c *ManualClock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Sleepers returns how many goroutines wait on the clock (the ingest model's
// throughput limiter, WithLoadThroughput). Advance wakes those whose wake-up
// time it reaches before it returns, so right after Advance the count holds
// only those still waiting.
func (c *ManualClock) Sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sleepers)
}

// WaitSleepers blocks until at least n goroutines wait on the clock, or ctx
// is done (then it returns ctx.Err()). Tests use it as the event "the load is
// throttled now" before calling Advance.
func (c *ManualClock) WaitSleepers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		have, ch := len(c.sleepers), c.changed
		c.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sleepUntil blocks until the clock reads t or later (Advance moves it), ctx
// is done or stop is closed.
func (c *ManualClock) sleepUntil(ctx context.Context, stop <-chan struct{}, t time.Time) error {
	c.mu.Lock()
	if !c.now.Before(t) {
		c.mu.Unlock()
		return nil
	}
	sl := &clockSleeper{until: t, wake: make(chan struct{})}
	c.sleepers[sl] = struct{}{}
	c.notifyLocked()
	c.mu.Unlock()
	var err error
	select {
	case <-sl.wake:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-stop:
		err = errServerClosed
	}
	c.mu.Lock()
	if _, ok := c.sleepers[sl]; ok {
		delete(c.sleepers, sl)
		c.notifyLocked()
	}
	c.mu.Unlock()
	return err
}

// untilSleeper is a Clock that can wait for a time of its own (ManualClock).
// Other clocks are waited on with wall-clock timers (sleepOn).
type untilSleeper interface {
	sleepUntil(ctx context.Context, stop <-chan struct{}, t time.Time) error
}

// sleepOn waits until clk reads t: on a ManualClock until Advance reaches
// t, on any other clock for t - clk.Now() of wall time.
func sleepOn(ctx context.Context, stop <-chan struct{}, clk Clock, t time.Time) error {
	if s, ok := clk.(untilSleeper); ok {
		return s.sleepUntil(ctx, stop, t)
	}
	d := t.Sub(clk.Now())
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return errServerClosed
	}
}
