package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/doris-sink/doris-sink/loader"
)

// errDrainTimeout is the cause of the drain context's cancellation when
// the drain timeout passed.
var errDrainTimeout = errors.New("drain timeout")

// drain checkpoints what was consumed since the last checkpoint: the
// offsets consumed when the drain began (target) are the drain's end, and
// nothing past them is read.
//
// A failed checkpoint is retried like one of the run loop (back off,
// Recover, rewind to the position it returns), except that the records are
// re-read only up to target, then checkpointed again. cause, when not nil,
// is a failure the run loop was recovering from when Drain was called: the
// drain starts with that retry. The whole drain is bounded by dctx, which
// the drain timeout (on the Connector's clock, counted from the Drain call)
// cancels with errDrainTimeout; then drain returns a *DrainError. ctx's
// cancellation (the second signal) ends the drain at once with ctx.Err().
// Errors Recover cannot fix, and the failures Run stops for (*FatalError,
// *RejectedError), end it at once too.
func (c *Connector) drain(ctx, dctx context.Context, cause error) error {
	c.inDrain = true
	target := c.next.clone()
	healID, healEnd, healing, err := c.healTarget()
	if err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	if healing {
		// Recover rewound to the start of a decided checkpoint Doris
		// aborted: what was read of it before is not loaded. The drain
		// re-reads it up to its decided end and checkpoints it (the heal).
		for t, offs := range healEnd.PerTopic() {
			for p, o := range offs {
				if cur, _ := target.get(t, p); o > cur {
					target.set(t, p, o)
				}
			}
		}
	}
	if cause == nil && c.pend.records == 0 && (!healing || reached(c.next, target)) {
		c.o.logger.Debug("drained: nothing to checkpoint")
		return nil
	}
	attempts, last := 0, error(nil)
	err, fresh := cause, false
	if cause == nil {
		attempts, fresh = 1, true
		if healing {
			c.o.logger.Info("drain: re-reading the checkpoint being healed up to its decided end", "id", healID,
				"drain_position", target.position().String())
			err = c.reread(dctx, target)
		} else {
			err = c.checkpoint(dctx)
		}
	}
	for err != nil {
		timedOut := errors.Is(context.Cause(dctx), errDrainTimeout)
		if errors.Is(err, loader.ErrNeedRecover) && !(timedOut && errors.Is(err, context.Canceled)) {
			last = err // a checkpoint failure, not the timeout's cancellation
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case timedOut:
			return c.drainError(attempts, cmp.Or(last, err))
		case !errors.Is(err, loader.ErrNeedRecover):
			return fmt.Errorf("drain: %w", err)
		}
		if fresh {
			c.metrics.CheckpointFailures.Add(1)
			if serr := c.stopFor(err); serr != nil {
				return fmt.Errorf("drain: %w", serr)
			}
		}
		c.o.logger.Warn("drain: final checkpoint failed; recovering, re-reading up to the drain position and retrying",
			"attempt", attempts, "drain_position", target.position().String(), "err", err)
		if rerr := c.recoverAndRewind(dctx, err); rerr != nil {
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(context.Cause(dctx), errDrainTimeout):
				return c.drainError(attempts, cmp.Or(last, err))
			}
			return fmt.Errorf("drain: %w", rerr) // Recover cannot fix it
		}
		attempts++
		err, fresh = c.reread(dctx, target), true
	}
	c.o.logger.Debug("drained", "position", c.start.String(), "attempts", attempts)
	return nil
}

// startContext is ctx cancelled by Drain: Run's start (the dead-letter
// topic check, the first Recover and its retries, resolving the topics and
// the start offsets) reads nothing, so a drain then has nothing to finish
// and stops it at once instead of waiting for the drain budget.
func (c *Connector) startContext(ctx context.Context) (context.Context, func()) {
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-c.drainCh:
			cancel()
		case <-sctx.Done():
		}
	}()
	return sctx, cancel
}

// drainContext returns ctx bounded by the drain timeout: it is cancelled
// with cause errDrainTimeout when the timer that Drain started fires. Run
// uses it for everything, so that a call in flight when Drain is called
// (a Recover, a blocked Stream Load) is bounded by the drain budget too.
func (c *Connector) drainContext(ctx context.Context) (context.Context, func()) {
	dctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-c.drainCh:
		case <-dctx.Done():
			return
		}
		if c.drainTimer == nil {
			return
		}
		select {
		case <-c.drainTimer:
			cancel(errDrainTimeout)
		case <-dctx.Done():
		}
	}()
	return dctx, func() { cancel(nil) }
}

// healTarget returns the id and decided end position of the checkpoint the
// loader is healing (Sink.Healing), ok false when it heals none.
func (c *Connector) healTarget() (id uint64, end Position, ok bool, err error) {
	id, raw, ok := c.sink.Healing()
	if !ok {
		return 0, Position{}, false, nil
	}
	pos, ok, err := ParsePosition(raw)
	if err == nil && ok {
		err = c.checkPositionTopics(pos)
	}
	if err != nil || !ok {
		return 0, Position{}, false, fmt.Errorf("the decided end %s of checkpoint %d being healed: %w", raw, id,
			cmp.Or(err, errors.New("no position")))
	}
	return id, pos, true, nil
}

// reread reads from the rewound position up to target (c.drainTo bounds
// handlePartition, which may checkpoint at the row or byte cap on the way)
// and checkpoints what it read.
func (c *Connector) reread(ctx context.Context, target topicOffsets) error {
	c.drainTo = target
	defer func() { c.drainTo = nil }()
	for !reached(c.next, target) {
		fs := c.poll(ctx, false)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := c.fetchErrors(ctx, fs); err != nil {
			return err
		}
		if err := c.handle(ctx, fs); err != nil {
			return err
		}
	}
	if c.pend.records == 0 {
		return nil // everything up to target is decided already
	}
	return c.checkpoint(ctx)
}

// pastDrain reports whether the record at offset off of topic's partition
// part must not be read because Drain was called: always during the first
// drain attempt (nothing more is read), and at or past the drain position
// while a failed drain checkpoint is re-read.
func (c *Connector) pastDrain(topic string, part int32, off int64) bool {
	if c.drainTo == nil {
		return true
	}
	lim, ok := c.drainTo.get(topic, part)
	return !ok || off >= lim
}

// reached reports whether next has read every partition up to target.
func reached(next, target topicOffsets) bool {
	for t, offs := range target {
		for part, o := range offs {
			if n, _ := next.get(t, part); n < o {
				return false
			}
		}
	}
	return true
}

// drainError is the *DrainError of a drain that could not checkpoint what
// was read (the drain timeout passed, or Drain came while starting up or
// recovering); last is the last failure.
func (c *Connector) drainError(attempts int, last error) *DrainError {
	resume := ""
	if pos, ok := c.Decided(); ok {
		resume = pos.String()
	}
	var ce *loader.CheckpointError
	if errors.As(last, &ce) {
		resume = string(ce.Position) // the loader's own view; nil before the first decision
	}
	return &DrainError{Attempts: attempts, Timeout: c.o.drainTimeout, Resume: resume, Err: last}
}
