package doristest

import (
	"sync"
	"time"
)

// Clock is the emulator's time source. Every Doris timer (PREPARE and
// PRECOMMITTED timeouts, label retention, doris-api.md §4–§5) is evaluated
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
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock reading start. A zero start means
// 2026-01-01 00:00:00 UTC.
func NewManualClock(start time.Time) *ManualClock {
	if start.IsZero() {
		start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &ManualClock{now: start}
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
	return c.now
}
