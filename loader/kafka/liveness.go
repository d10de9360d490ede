package kafka

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// DefaultFenceCheckInterval is how often WithFenceCheck's check runs when
// its interval is zero.
const DefaultFenceCheckInterval = 10 * time.Second

// WithFenceCheck runs check every interval (DefaultFenceCheckInterval if
// ≤ 0) while Run reads. When check returns an error wrapping
// checkpoint.ErrFenced, Run stops with that error (the open checkpoint is
// not decided; closing the loader aborts its transaction): a process
// fenced by a newer one stops even when it has nothing to save. Other
// errors are logged and the check runs again. The Kafka coordinator store
// (coordlog.Store.CheckFenced) provides such a check.
func WithFenceCheck(check func(context.Context) error, interval time.Duration) Opt {
	return optFunc(func(o *options) {
		if interval <= 0 {
			interval = DefaultFenceCheckInterval
		}
		o.fenceCheck, o.fenceEvery = check, interval
	})
}

// fence is the state of WithFenceCheck shared by the watcher and Run.
type fence struct {
	once sync.Once
	ch   chan struct{} // closed once err is set
	err  error
}

func newFence() *fence { return &fence{ch: make(chan struct{})} }

// set records the first fencing error and wakes Run.
func (f *fence) set(err error) {
	f.once.Do(func() { f.err = err; close(f.ch) })
}

// error returns the fencing error, nil while not fenced.
func (f *fence) error() error {
	select {
	case <-f.ch:
		return f.err
	default:
		return nil
	}
}

// watchFence runs the fence check until ctx ends or it reports fencing.
func (c *Connector) watchFence(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.o.clock.After(c.o.fenceEvery):
		}
		err := c.o.fenceCheck(ctx)
		switch {
		case err == nil:
		case errors.Is(err, checkpoint.ErrFenced):
			c.o.logger.Error("fenced by a newer process of this job: stopping", "err", err)
			c.fence.set(err)
			return
		case ctx.Err() == nil:
			c.o.logger.Warn("fence check failed (retried)", "err", err)
		}
	}
}
