package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// Run recovers the loader, assigns the topic's partitions at the position
// it returns and loads records until ctx is cancelled, Drain is called or
// a terminal error occurs. It always closes the loader before returning.
//
//   - After Drain it checkpoints what was consumed, closes the loader and
//     returns nil. A failed drain checkpoint is retried like any failed
//     checkpoint (back off, Recover, rewind), re-reading only up to the
//     offsets consumed when the drain began, until WithDrainTimeout's
//     budget is spent: then Run returns a *DrainError (nothing is lost, a
//     restart resumes from the last decided position).
//   - When ctx is cancelled (abort, also during a drain) the open checkpoint is not decided: the
//     loader is closed (its open transaction aborted) within the close
//     timeout and Run returns ctx.Err().
//   - A failed checkpoint (an error wrapping loader.ErrNeedRecover) is not
//     terminal: Run backs off, calls Recover and rewinds every partition to
//     the position it returns.
//   - Terminal errors: a *RecordError (no dead-letter topic), a
//     *DeadLetterError, a lost Kafka position (offset out of range, data
//     loss), a loader error that Recover cannot fix (crash, fencing,
//     unresolved label), a topic that does not exist.
//
// Run may be called once.
func (c *Connector) Run(ctx context.Context) error {
	if !c.ran.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	defer c.adminCl.Close()
	bg, stopBG := context.WithCancel(ctx)
	var wg sync.WaitGroup
	err := c.run(ctx, bg, &wg)
	stopBG()
	wg.Wait()
	c.mu.Lock()
	cl := c.cl
	c.cl = nil
	c.mu.Unlock()
	if cl != nil {
		cl.Close()
	}
	cctx := ctx
	if ctx.Err() != nil || err != nil {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), c.o.closeTimeout)
		defer cancel()
	}
	cerr := c.sink.Close(cctx)
	if errors.Is(cerr, loader.ErrCrashed) && errors.Is(err, loader.ErrCrashed) {
		cerr = nil
	}
	if cerr != nil {
		cerr = fmt.Errorf("close loader: %w", cerr)
	}
	if ctx.Err() != nil {
		return errors.Join(ctx.Err(), cerr)
	}
	return errors.Join(err, cerr)
}

func (c *Connector) run(ctx, bg context.Context, wg *sync.WaitGroup) error {
	raw, err := c.recoverSink(ctx, false)
	if err != nil {
		return err
	}
	if err := c.begin(ctx, raw); err != nil {
		return err
	}
	if c.knobs.AfterStart != nil {
		c.knobs.AfterStart(c.start.clone())
	}
	if c.cfg.PartitionRefresh > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.refreshPartitions(bg)
		}()
	}
	if c.o.fenceCheck != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.watchFence(bg)
		}()
	}
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := c.fence.error(); err != nil {
			return err
		}
		if c.draining() {
			return c.drain(ctx)
		}
		fs := c.poll(ctx, true)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := c.fetchErrors(fs)
		if err == nil {
			err = c.handle(ctx, fs)
		}
		if err == nil && c.fired && c.pend.records > 0 && !c.draining() {
			err = c.checkpoint(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, loader.ErrNeedRecover) {
				return err
			}
			if err := c.recoverAndRewind(ctx, err); err != nil {
				return err
			}
		}
		if c.knobs.AfterPoll != nil {
			c.knobs.AfterPoll(Position{Topic: c.cfg.Topic, Offsets: maps.Clone(c.next)})
		}
	}
}

// poll returns the next fetches; it returns early (empty) when the
// checkpoint timer fires (setting c.fired) or, with wakeOnDrain, when
// Drain is called.
func (c *Connector) poll(ctx context.Context, wakeOnDrain bool) kgo.Fetches {
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done, stopped := make(chan struct{}), make(chan struct{})
	timerC, fired := c.timerC, false
	drainCh := c.drainCh
	if !wakeOnDrain {
		drainCh = nil
	}
	go func() {
		defer close(stopped)
		select {
		case <-timerC:
			fired = true
			cancel()
		case <-drainCh:
			cancel()
		case <-c.fence.ch:
			cancel()
		case <-done:
		}
	}()
	c.mu.Lock()
	cl := c.cl
	c.mu.Unlock()
	fs := cl.PollRecords(pctx, c.cfg.PollMaxRecords)
	close(done)
	<-stopped
	if fired {
		c.fired = true
	}
	return fs
}

// fetchErrors returns the terminal fetch errors and logs the others
// (kgo retries them). The poll's own cancellation is not an error.
func (c *Connector) fetchErrors(fs kgo.Fetches) error {
	var terminal []error
	fs.EachError(func(t string, p int32, err error) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return
		}
		c.metrics.FetchErrors.Add(1)
		var dl *kgo.ErrDataLoss
		switch {
		case errors.As(err, &dl), errors.Is(err, kerr.OffsetOutOfRange):
			terminal = append(terminal, fmt.Errorf("partition %s/%d: the position to read is no longer in the log "+
				"(records were deleted by retention or lost by the broker before they were loaded): %w", t, p, err))
		case errors.Is(err, kgo.ErrClientClosed):
			terminal = append(terminal, fmt.Errorf("partition %s/%d: %w", t, p, err))
		default:
			c.o.logger.Warn("fetch error (retried)", "topic", t, "partition", p, "err", err)
		}
	})
	return errors.Join(terminal...)
}

// handle converts and writes every record of fs, checkpointing at the
// row and byte caps and when the interval timer fires.
func (c *Connector) handle(ctx context.Context, fs kgo.Fetches) error {
	for i := range fs {
		for j := range fs[i].Topics {
			t := &fs[i].Topics[j]
			for k := range t.Partitions {
				p := &t.Partitions[k]
				if p.Err != nil || len(p.Records) == 0 {
					continue
				}
				if err := c.handlePartition(ctx, p); err != nil {
					return err
				}
				if c.draining() && c.drainTo == nil {
					return nil
				}
				last := p.Records[len(p.Records)-1].Offset
				c.metrics.setFetched(p.Partition, last+1, p.HighWatermark)
			}
		}
	}
	return nil
}

// timerEvery is how many records pass between two looks at the
// checkpoint timer inside one partition's batch (each look is a channel
// receive attempt; the caps are checked on every record). The timer is
// also looked at after every batch.
const timerEvery = 256

// handlePartition converts and writes the records of one fetched
// partition. The partition's next offset is kept in a local and stored in
// c.next before a checkpoint and on return; the record and byte counters
// are added to the metrics at the same points, not per record.
func (c *Connector) handlePartition(ctx context.Context, p *kgo.FetchPartition) error {
	part := p.Partition
	next, seen := c.next[part]
	var t tally
	store := func() {
		if seen {
			c.next[part] = next
		}
		t.flush(c.metrics)
	}
	defer store()
	for n, r := range p.Records {
		if c.draining() && c.pastDrain(part, r.Offset) {
			return nil
		}
		if seen && r.Offset < next {
			continue // read before (defensive: never load a record twice)
		}
		if err := c.record(ctx, r, &t); err != nil {
			return err
		}
		next, seen = r.Offset+1, true
		if c.capped() || ((n+1)%timerEvery == 0 && c.timerFired()) {
			store()
			if err := c.checkpoint(ctx); err != nil {
				return err
			}
		}
	}
	if c.timerFired() && c.pend.records > 0 {
		store()
		return c.checkpoint(ctx)
	}
	return nil
}

// tally counts what a batch of records adds to the metrics.
type tally struct{ records, bytes, rows, rowBytes int64 }

// flush adds t to m and resets it.
func (t *tally) flush(m *Metrics) {
	if t.records == 0 && t.rows == 0 {
		return
	}
	m.Records.Add(t.records)
	m.Bytes.Add(t.bytes)
	m.Rows.Add(t.rows)
	m.RowBytes.Add(t.rowBytes)
	*t = tally{}
}

// record converts r and hands its row to the loader, or dead-letters it.
// The caller skips records read before and advances the partition's next
// offset when record returns nil; t receives the counters.
func (c *Connector) record(ctx context.Context, r *kgo.Record, t *tally) error {
	row, err := c.conv.Convert(r)
	switch {
	case err == nil:
		if err := c.sink.Write(ctx, row); err != nil {
			return fmt.Errorf("write %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
		}
		c.pend.rows++
		c.pend.rowBytes += int64(len(row))
		t.rows++
		t.rowBytes += int64(len(row))
	case errors.Is(err, ErrTombstone):
		c.pend.tombstones++
		c.metrics.Tombstones.Add(1)
	default:
		rerr := &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Format: c.cfg.Format, Err: err}
		if c.cfg.DeadLetterTopic == "" {
			return rerr
		}
		if err := c.deadLetter(ctx, r, rerr); err != nil {
			return err
		}
		c.pend.deadLettered++
		c.metrics.DeadLettered.Add(1)
	}
	c.pend.records++
	t.records++
	t.bytes += int64(len(r.Value))
	if c.timerC == nil {
		c.timerC = c.o.clock.After(c.cfg.CheckpointInterval)
	}
	return nil
}

// timerFired reports whether the open checkpoint's interval timer fired
// (it sets c.fired).
func (c *Connector) timerFired() bool {
	if !c.fired && c.timerC != nil {
		select {
		case <-c.timerC:
			c.fired = true
		default:
		}
	}
	return c.fired
}

// capped reports whether the open checkpoint reached its row or byte cap.
func (c *Connector) capped() bool {
	return (c.cfg.CheckpointMaxRows > 0 && c.pend.rows >= c.cfg.CheckpointMaxRows) ||
		(c.cfg.CheckpointMaxBytes > 0 && c.pend.rowBytes >= c.cfg.CheckpointMaxBytes)
}

// checkpoint decides the records consumed so far: ld.Checkpoint(next).
func (c *Connector) checkpoint(ctx context.Context) error {
	end := Position{Topic: c.cfg.Topic, Offsets: maps.Clone(c.next)}
	raw, err := end.MarshalJSON()
	if err != nil {
		return fmt.Errorf("checkpoint: encode position: %w", err)
	}
	err = c.sink.CheckpointWith(ctx, raw, loader.CheckpointInfo{DeadLettered: c.pend.deadLettered})
	st := CheckpointStats{Start: c.start, End: end, Records: c.pend.records, Rows: c.pend.rows, RowBytes: c.pend.rowBytes,
		DeadLettered: c.pend.deadLettered, Tombstones: c.pend.tombstones, Err: err}
	c.timerC, c.fired = nil, false
	if err != nil {
		c.metrics.CheckpointFailures.Add(1)
		if c.o.onCheckpoint != nil {
			c.o.onCheckpoint(st)
		}
		return fmt.Errorf("checkpoint at %s: %w", raw, err)
	}
	c.metrics.Checkpoints.Add(1)
	c.metrics.setLoaded(end.Offsets)
	c.start, c.pend = end, pending{}
	if c.o.onCheckpoint != nil {
		c.o.onCheckpoint(st)
	}
	c.o.logger.Debug("checkpoint decided", "end", string(raw), "rows", st.Rows, "dead_lettered", st.DeadLettered)
	c.commitGroup(ctx, end)
	return nil
}

// recoverAndRewind handles a failed checkpoint: back off, Recover, rewind.
func (c *Connector) recoverAndRewind(ctx context.Context, cause error) error {
	c.o.logger.Warn("checkpoint failed; recovering and rewinding", "err", cause)
	raw, err := c.recoverSink(ctx, true)
	if err != nil {
		return errors.Join(cause, err)
	}
	if err := c.rewind(raw); err != nil {
		return err
	}
	if c.knobs.AfterRewind != nil {
		c.knobs.AfterRewind(c.start.clone())
	}
	return nil
}

// recoverSink calls Recover until it succeeds, ctx ends or the error is
// one Recover cannot fix; after a failure (and before every retry) it
// backs off.
func (c *Connector) recoverSink(ctx context.Context, afterFailure bool) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		if afterFailure || attempt > 0 {
			if err := c.backoff(ctx, attempt); err != nil {
				return nil, err
			}
		}
		c.metrics.Recovers.Add(1)
		raw, err := c.sink.Recover(ctx)
		if err == nil {
			return raw, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.metrics.RecoverFailures.Add(1)
		if terminalRecoverError(err) {
			return nil, fmt.Errorf("recover: %w", err)
		}
		c.o.logger.Warn("recover failed; retrying", "attempt", attempt+1, "err", err)
	}
}

func terminalRecoverError(err error) bool {
	var unresolved *loader.UnresolvedError
	var fencing *loader.FencingError
	var owner *checkpoint.OwnerError
	return errors.Is(err, loader.ErrCrashed) || errors.Is(err, loader.ErrClosed) || errors.Is(err, checkpoint.ErrFenced) ||
		errors.As(err, &unresolved) || errors.As(err, &fencing) || errors.As(err, &owner)
}

// backoff waits min·2^attempt, capped at max, on the Connector's clock.
func (c *Connector) backoff(ctx context.Context, attempt int) error {
	d := c.o.backoffMin
	for i := 0; i < attempt && d < c.o.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.o.backoffMax)
	if d <= 0 {
		return nil
	}
	select {
	case <-c.o.clock.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
