package kafka

import (
	"context"
	"sync"
	"time"
)

// manualClock is a loader.Clock that moves only on Advance.
type manualClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []manualTimer
	changed chan struct{}
}

type manualTimer struct {
	at  time.Time
	ch  chan time.Time
	dur time.Duration
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), changed: make(chan struct{})}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.timers = append(c.timers, manualTimer{at: c.now.Add(d), ch: ch, dur: d})
	close(c.changed)
	c.changed = make(chan struct{})
	return ch
}

// Advance moves the clock by d and fires the timers that are due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now
			continue
		}
		kept = append(kept, t)
	}
	c.timers = kept
}

// waitTimer blocks until a timer of duration d is pending.
func (c *manualClock) waitTimer(ctx context.Context, d time.Duration) error {
	for {
		c.mu.Lock()
		ch := c.changed
		for _, t := range c.timers {
			if t.dur == d {
				c.mu.Unlock()
				return nil
			}
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
