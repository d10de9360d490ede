package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/registry"
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
//     restart resumes from the last decided position). Drain is honoured
//     in every state: a backoff wait ends at once, and the drain budget
//     (counted from the Drain call) bounds a Recover or a Doris call in
//     flight, a retry loop, a fail-fast grace. Drain while recovering from
//     a failure retries that checkpoint within the budget the same way.
//   - When ctx is cancelled (abort, also during a drain) the open checkpoint is not decided: the
//     loader is closed (its open transaction aborted) within the close
//     timeout and Run returns ctx.Err().
//   - A failed checkpoint (an error wrapping loader.ErrNeedRecover) is not
//     terminal: Run backs off (WithRecoverBackoff: exponential over
//     consecutive failures, reset by a decided checkpoint), calls Recover
//     and rewinds every partition to the position it returns. So is a
//     failed background commit (loader.Loader.CommitFailed): Run recovers
//     at once, without waiting for a record, so that a decided checkpoint
//     Doris aborted is healed on a quiet topic too.
//   - Failures that retrying cannot fix end Run with a *FatalError once
//     they have persisted for WithFailFastAfter (unknown Doris database or
//     table, rejected credentials, a missing topic, an unwritable
//     checkpoint store); a checkpoint Doris refuses for its data ends it at
//     once with a *RejectedError (no retry: the same rows fail the same
//     way).
//   - Before anything is read, a configured dead-letter topic is checked:
//     missing (without Config.DeadLetterCreate) or not writable ends Run
//     with a *DeadLetterTopicError.
//   - Other terminal errors: a *RecordError (no dead-letter topic), a
//     *DeadLetterError, a lost Kafka position (offset out of range, data
//     loss), a loader error that Recover cannot fix (crash, fencing,
//     unresolved label).
//
// From the first failure of a run of failures until the next decided
// checkpoint, Metrics.Stall reports the reason.
//
// Run may be called once.
func (c *Connector) Run(ctx context.Context) error {
	if !c.ran.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	defer c.adminCl.Close()
	bg, stopBG := context.WithCancel(ctx)
	dctx, stopDrain := c.drainContext(ctx)
	var wg sync.WaitGroup
	err := c.run(ctx, dctx, bg, &wg)
	stopDrain()
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
	if ctx.Err() != nil || err != nil || c.draining() {
		// Bounded: after a drain the last commit may still run (Doris
		// down); it is decided, so a restart commits it.
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

// errCommitFailed: the background commit of the last decided checkpoint
// failed (loader.Loader.CommitFailed).
var errCommitFailed = errors.New("the background commit of the last decided checkpoint failed")

func (c *Connector) run(ctx, dctx, bg context.Context, wg *sync.WaitGroup) error {
	defer func() { c.dlLog.flush(c.o.logger, c.o.clock.Now(), c.cfg.DeadLetterTopic) }()
	// Until reading begins nothing was read, so a drain has nothing to
	// checkpoint: Drain cuts the start's waits at once (a Recover cut
	// midway is resumed by the next start, as after a crash).
	sctx, stopStart := c.startContext(dctx)
	defer stopStart()
	if err := c.checkDeadLetterTopic(sctx); err != nil {
		return c.stopped(ctx, sctx, err)
	}
	raw, err := c.recoverSink(sctx, false)
	if err == nil {
		c.loadRefused()
		err = c.begin(sctx, raw)
	}
	if err != nil {
		return c.stopped(ctx, sctx, err)
	}
	stopStart()
	c.progress()
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
	if c.re != nil && c.cfg.PartitionRefresh > 0 {
		c.topicsC = c.o.clock.After(c.cfg.PartitionRefresh)
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
			return c.drain(ctx, dctx, nil)
		}
		if c.pend.records == 0 {
			c.maybeDiscoverTopics(dctx) // nothing is open: a checkpoint boundary
			c.idleSweep(dctx)
		}
		fs := c.poll(dctx, true)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := c.fetchErrors(dctx, fs)
		if err == nil {
			err = c.handle(dctx, fs)
		}
		if err == nil && c.fired && c.pend.records > 0 && !c.draining() {
			err = c.checkpoint(dctx)
		}
		if err == nil {
			err = c.commitFailure()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, loader.ErrNeedRecover) {
				return err
			}
			if err := c.failed(ctx, dctx, err); err != nil {
				return err
			}
		}
		if c.knobs.AfterPoll != nil {
			c.knobs.AfterPoll(c.next.position())
		}
	}
}

// commitFailure returns an error wrapping loader.ErrNeedRecover and
// errCommitFailed when the loader's background commit failed.
func (c *Connector) commitFailure() error {
	select {
	case <-c.sink.CommitFailed():
	default:
		return nil
	}
	id, lbl, _ := c.sink.LastDecision()
	return fmt.Errorf("checkpoint %d label %s: %w (Doris aborted it or could not be reached); recovering now: %w",
		id, lbl, errCommitFailed, loader.ErrNeedRecover)
}

// failed handles a failed checkpoint (cause wraps loader.ErrNeedRecover)
// outside a drain: count it, stop on what retrying cannot fix, else back
// off, Recover and rewind; a Drain during that turns into a drain.
func (c *Connector) failed(ctx, dctx context.Context, cause error) error {
	c.metrics.CheckpointFailures.Add(1)
	if err := c.stopFor(cause); err != nil {
		return err
	}
	if c.draining() {
		return c.drain(ctx, dctx, cause)
	}
	err := c.recoverAndRewind(dctx, cause)
	switch {
	case err == nil || ctx.Err() != nil:
		return err
	case errors.Is(err, errDrainRequested):
		return c.drain(ctx, dctx, cause)
	case errors.Is(context.Cause(dctx), errDrainTimeout):
		return c.drainError(0, cause) // a Recover in flight outlasted the drain budget
	}
	return err
}

// stopFor records the failure cause and returns the error that ends Run
// when retrying cannot fix it: a *RejectedError at once, a *FatalError
// after the fail-fast grace; nil to retry.
func (c *Connector) stopFor(cause error) error {
	if errors.Is(cause, ErrNotOwner) {
		c.o.logger.Warn("the decision was refused: this process no longer owns its partitions; stopping without retry",
			"err", cause)
		return cause
	}
	if re := c.rejected(cause); re != nil {
		if c.bisectRejected(re) {
			c.fail.n++
			c.fail.last = cause
			c.metrics.SetStall(c.o.clock.Now(), fmt.Sprintf("Doris refused rows of label %s: bisecting to dead-letter them", re.Label), false)
			return nil
		}
		c.fail.n++
		c.fail.last = cause
		c.metrics.SetStall(c.o.clock.Now(), fmt.Sprintf("Doris rejected the rows of label %s for their data", re.Label), true)
		c.o.logger.Error("Doris rejected a checkpoint for its data: stopping without retry", "label", re.Label,
			"range", rangeString(re.Start, re.End), "filtered", re.Filtered, "total", re.Total, "error_url", re.ErrorURL)
		return re
	}
	return c.noteFailure(cause)
}

// stopped is Run's result when the start (Recover, topic look-up) ended
// with err: a Drain during it ends Run with nil, or with a *DrainError
// when it was failing; anything else is returned as is.
func (c *Connector) stopped(ctx, dctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case !c.draining() || !(errors.Is(err, errDrainRequested) || dctx.Err() != nil):
		return err
	case c.fail.n == 0:
		c.o.logger.Debug("drained before reading: nothing was read")
		return nil
	}
	return c.drainError(0, c.fail.last)
}

// poll returns the next fetches; it returns early (empty) when the
// checkpoint timer fires (setting c.fired), or, with wakeOnDrain (the run
// loop), when Drain is called, the loader's background commit failed or
// the look for new topics is due (setting c.topicsDue).
func (c *Connector) poll(ctx context.Context, wakeOnDrain bool) kgo.Fetches {
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done, stopped := make(chan struct{}), make(chan struct{})
	timerC, fired := c.timerC, false
	drainCh := c.drainCh
	if !wakeOnDrain {
		drainCh = nil
	}
	var commitC <-chan struct{}
	var topicsC, sweepC <-chan time.Time
	topicsFired, sweepFired := false, false
	if wakeOnDrain {
		topicsC, sweepC = c.topicsC, c.sweepC
		// Only the run loop recovers at once; a drain's re-read finds the
		// failed commit at its checkpoint (a closed channel would make every
		// poll return at once).
		commitC = c.sink.CommitFailed()
	}
	go func() {
		defer close(stopped)
		select {
		case <-timerC:
			fired = true
			cancel()
		case <-drainCh:
			cancel()
		case <-commitC:
			cancel()
		case <-topicsC:
			topicsFired = true
			cancel()
		case <-sweepC:
			sweepFired = true
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
	if topicsFired {
		c.topicsDue, c.topicsC = true, nil
	}
	if sweepFired {
		c.sweepDue, c.sweepC = true, nil
	}
	return fs
}

// idleSweep runs the sink's zombie sweep when it is a Sweeper, no record
// is pending (called only then) and the idle timer fired; it arms the
// timer when none runs. A record arriving first leaves the sweep to the
// Loader's next checkpoint boundary; the timer stays armed, so the sweep
// runs at most once per interval either way. What the sweep finds or
// fails to list is logged by the Loader; an error that makes the sink
// unusable surfaces at its next Write.
func (c *Connector) idleSweep(ctx context.Context) {
	sw, ok := c.sink.(Sweeper)
	if !ok || sw.SweepEvery() <= 0 {
		return
	}
	if !c.sweepDue && c.sweepC != nil {
		select {
		case <-c.sweepC:
			c.sweepDue, c.sweepC = true, nil
		default:
		}
	}
	if c.sweepDue {
		c.sweepDue = false
		if err := sw.Sweep(ctx); err != nil {
			c.o.logger.Debug("idle zombie sweep", "err", err)
		}
	}
	if c.sweepC == nil {
		// The system clock, not WithClock's: a housekeeping period outside
		// the checkpoint protocol, which a test's manual clock (driving
		// intervals and backoffs) must not see.
		c.sweepC = time.After(sw.SweepEvery())
	}
}

// fetchErrors returns the terminal fetch errors and logs the others
// (kgo retries them). The poll's own cancellation is not an error. An
// offset out of range is a *PositionOutOfRangeError per topic; a topic
// kgo reports unknown that exists under another ID is a
// *TopicRecreatedError, at once.
func (c *Connector) fetchErrors(ctx context.Context, fs kgo.Fetches) error {
	var terminal []error
	oor := map[string]map[int32]error{}
	recreated := map[string]bool{}
	fs.EachError(func(t string, p int32, err error) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return
		}
		c.metrics.FetchErrors.Add(1)
		var dl *kgo.ErrDataLoss
		var big *kgo.ErrDecompressTooLarge
		switch {
		case errors.Is(err, kerr.OffsetOutOfRange):
			// The consumer never resets (consumerOpts): retention or
			// DeleteRecords moved the log start past the position, or the
			// log was truncated under it.
			if oor[t] == nil {
				oor[t] = map[int32]error{}
			}
			oor[t][p] = err
		case errors.As(err, &dl):
			terminal = append(terminal, fmt.Errorf("partition %s/%d: the position to read is no longer in the log "+
				"(records were deleted by retention or lost by the broker before they were loaded): %w", t, p, err))
		case errors.As(err, &big):
			// kgo stops fetching the partition: waiting would stall it
			// forever while looking healthy.
			terminal = append(terminal, fmt.Errorf("partition %s/%d: the record batch at offsets %d to %d decompresses to more "+
				"than %d bytes (kafka.max_decompressed_batch_bytes); nothing of it was loaded or skipped: raise the bound to "+
				"read it, the next start reads it again: %w", t, p, big.Offset, big.NextOffset-1, c.cfg.MaxDecompressedBatchBytes, err))
		case errors.Is(err, kgo.ErrClientClosed):
			terminal = append(terminal, fmt.Errorf("partition %s/%d: %w", t, p, err))
		case errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID):
			if recreated[t] {
				return
			}
			// Recreated (kgo keeps the old ID and answers UNKNOWN_TOPIC_ID):
			// stop at once, naming both IDs.
			if rerr := c.recreatedNow(ctx, t); rerr != nil {
				recreated[t] = true
				terminal = append(terminal, rerr)
				return
			}
			// The topic was deleted (kgo reports it after
			// kgo.UnknownTopicRetries): waited for up to the fail-fast grace
			// (it may be being recreated), then fatal.
			if ferr := c.noteFailure(fmt.Errorf("partition %s/%d: %w", t, p, err)); ferr != nil {
				terminal = append(terminal, ferr)
			} else {
				c.o.logger.Warn("fetch: the topic does not exist (waiting up to the fail-fast grace)", "topic", t,
					"partition", p, "err", err)
			}
		default:
			c.o.logger.Warn("fetch error (retried)", "topic", t, "partition", p, "err", err)
		}
	})
	for t := range oor {
		// A client that adopted a recreated topic's new ID asks the new log
		// for the old offsets: say recreated, not out of range.
		if rerr := c.recreatedNow(ctx, t); rerr != nil {
			terminal = append(terminal, rerr)
			delete(oor, t)
		}
	}
	if len(oor) > 0 {
		terminal = append(terminal, c.outOfRange(ctx, oor))
	}
	return errors.Join(terminal...)
}

// handle converts and writes every record of fs, checkpointing at the
// row and byte caps and when the interval timer fires.
func (c *Connector) handle(ctx context.Context, fs kgo.Fetches) error {
	for i := range fs {
		for j := range fs[i].Topics {
			t := &fs[i].Topics[j]
			if err := c.fetchedTopic(ctx, t.Topic, t.TopicID); err != nil {
				return err
			}
			for k := range t.Partitions {
				p := &t.Partitions[k]
				if p.Err != nil || len(p.Records) == 0 {
					continue
				}
				c.metrics.setHighWatermark(t.Topic, p.Partition, p.HighWatermark)
				if err := c.handlePartition(ctx, t.Topic, p); err != nil {
					return err
				}
				if c.draining() && c.drainTo == nil {
					return nil
				}
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
// c.next (and the metrics' read position) before a checkpoint and on
// return, so a checkpoint's observers see it; the record and byte counters
// are added to the metrics at the same points, not per record.
func (c *Connector) handlePartition(ctx context.Context, topic string, p *kgo.FetchPartition) error {
	part := p.Partition
	next, seen := c.next.get(topic, part)
	var t tally
	store := func() {
		if seen {
			c.next.set(topic, part, next)
			c.metrics.setRead(topic, part, next)
		}
		t.flush(c.metrics)
	}
	defer store()
	for n, r := range p.Records {
		if c.draining() && c.pastDrain(topic, part, r.Offset) {
			return nil
		}
		if seen && r.Offset < next {
			continue // read before (defensive: never load a record twice)
		}
		// cut decides the records before r (schema evolution, evolve.go).
		cut := func() error { store(); return c.checkpoint(ctx) }
		if err := c.record(ctx, r, &t, cut); err != nil {
			// The record was read (not loaded): a drain that comes while
			// recovering from this failure re-reads up to and including it,
			// and a *RejectedError's range covers it.
			next, seen = r.Offset+1, true
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
func (c *Connector) record(ctx context.Context, r *kgo.Record, t *tally, cut func() error) error {
	var row []byte
	var table string
	var te *tableEvo
	err := c.oversized(r)
	if err == nil {
		row, table, te, err = c.convert(ctx, r)
	}
	if err == nil && c.routedFields != nil {
		c.watchRouted(ctx, table, row)
	}
	// A row bisection found Doris refuses is dead-lettered before anything
	// else; the pre-check runs after schema evolution, against the schema
	// the row loads into (the routed table's, or doris.table's as evolved).
	if err == nil && c.refused != nil {
		if done, err := c.screenRefused(ctx, r); done {
			if err != nil {
				return err
			}
			return c.counted(r, t)
		}
	}
	if err == nil && te != nil {
		if row, err = c.evolve(ctx, te, r, row, cut); err != nil {
			return err
		}
	}
	if err == nil {
		if done, err := c.screen(ctx, r, row, table); done {
			if err != nil {
				return err
			}
			return c.counted(r, t)
		}
	}
	if err == nil {
		// A routed table Doris does not have is the record's error (dead
		// letter, or a refusal naming it), not the checkpoint's.
		if err = c.write(ctx, table, r.Partition, row); err != nil && (table == "" || !isUnknownTable(err)) {
			return fmt.Errorf("write %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
		}
	}
	switch {
	case err == nil:
		c.pend.rows++
		c.pend.lastRow = recKey{r.Topic, r.Partition, r.Offset}
		c.evo.wrote(te)
		c.pend.rowBytes += int64(len(row))
		t.rows++
		t.rowBytes += int64(len(row))
	case errors.Is(err, ErrTombstone):
		c.pend.tombstones++
		c.metrics.Tombstones.Add(1)
	case ctx.Err() != nil:
		return ctx.Err() // stopped while asking the Schema Registry: not a bad record
	default:
		rerr := &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Format: c.cfg.Format, Err: err}
		// The Schema Registry could not give the record's schema within
		// its retry bound: the record may be fine, so it is refused
		// (the run stops at it), never dead-lettered.
		if c.cfg.DeadLetterTopic == "" || errors.Is(err, registry.ErrUnavailable) {
			return rerr
		}
		if err := c.deadLetter(ctx, r, ReasonConvert, "", rerr); err != nil {
			return err
		}
	}
	return c.counted(r, t)
}

// oversized is the error of a record whose key or headers pass their
// bound (Config.MaxKeyBytes, MaxHeadersBytes), else nil. A tombstone the
// format skips (SkipsTombstones) is never oversized: it loads no row and
// nothing reads its key or headers, and verify accounts it as a skipped
// tombstone (dead-lettering it too would count it twice).
func (c *Connector) oversized(r *kgo.Record) error {
	if r.Value == nil && SkipsTombstones(c.conv.format, c.conv.envelope) {
		return nil
	}
	if len(r.Key) > c.cfg.MaxKeyBytes {
		return fmt.Errorf("%w: its key is %d bytes, more than records.max_key_bytes %d", ErrRecordTooBig, len(r.Key), c.cfg.MaxKeyBytes)
	}
	if len(r.Headers) == 0 {
		return nil
	}
	n := 0
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	if n > c.cfg.MaxHeadersBytes {
		return fmt.Errorf("%w: its %d headers are %d bytes, more than records.max_headers_bytes %d", ErrRecordTooBig, len(r.Headers), n, c.cfg.MaxHeadersBytes)
	}
	return nil
}

// isUnknownTable reports whether err is a *loader.UnknownTableError. Its
// target lives here, not in record: errors.As moves its target to the
// heap, and declared in record it cost one allocation per record.
func isUnknownTable(err error) bool {
	var unknown *loader.UnknownTableError
	return errors.As(err, &unknown)
}

// counted counts r as consumed by the open checkpoint (starting its
// interval timer).
func (c *Connector) counted(r *kgo.Record, t *tally) error {
	c.pend.records++
	t.records++
	t.bytes += int64(len(r.Value))
	if c.timerC == nil {
		c.timerC = c.o.clock.After(c.cfg.CheckpointInterval)
	}
	return nil
}

// write hands row to the sink: to table when routing named one, else to
// the sink's own table; a KeySink gets the record's partition as the
// sub-load key (sub-load partition mod K).
func (c *Connector) write(ctx context.Context, table string, partition int32, row []byte) error {
	if ks, ok := c.sink.(KeySink); ok {
		if table == "" {
			return ks.WriteKey(ctx, uint64(partition), row)
		}
		return ks.WriteToKey(ctx, table, uint64(partition), row)
	}
	if table == "" {
		return c.sink.Write(ctx, row)
	}
	return c.sink.(TableSink).WriteTo(ctx, table, row)
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
		(c.cfg.CheckpointMaxBytes > 0 && c.pend.rowBytes >= c.cfg.CheckpointMaxBytes) ||
		c.pend.letterBytes >= c.cfg.DeadLetterBufferBytes ||
		(c.bisect != nil && c.pend.rows >= c.bisect.limit)
}

// checkpoint decides the records consumed so far: ld.Checkpoint(next).
func (c *Connector) checkpoint(ctx context.Context) error {
	end := c.next.position()
	raw, err := end.MarshalJSON()
	if err != nil {
		return fmt.Errorf("checkpoint: encode position: %w", err)
	}
	c.stageDeadLetters()
	err = c.sink.CheckpointWith(ctx, raw, loader.CheckpointInfo{DeadLettered: c.pend.deadLettered})
	st := CheckpointStats{Start: c.start, End: end, Records: c.pend.records, Rows: c.pend.rows, RowBytes: c.pend.rowBytes,
		DeadLettered: c.pend.deadLettered, Tombstones: c.pend.tombstones, Err: err}
	c.timerC, c.fired = nil, false
	if err != nil {
		c.unstageDeadLetters()
		// Counted in CheckpointFailures by the caller (failed, drain), like
		// failures while streaming.
		if c.o.onCheckpoint != nil {
			c.o.onCheckpoint(st)
		}
		return fmt.Errorf("checkpoint at %s: %w", raw, err)
	}
	c.metrics.Checkpoints.Add(1)
	for t, offs := range end.PerTopic() {
		c.metrics.setLoaded(t, offs)
	}
	c.start, c.pend = end, pending{}
	c.bisectDecided(end)
	c.evo.reset()
	c.setDecided(end)
	c.progress()
	if c.o.onCheckpoint != nil {
		c.o.onCheckpoint(st)
	}
	c.o.logger.Debug("checkpoint decided", "end", string(raw), "rows", st.Rows, "dead_lettered", st.DeadLettered)
	c.commitGroup(ctx, end)
	if !c.draining() {
		c.maybeDiscoverTopics(ctx) // a checkpoint boundary: nothing is open
	}
	return nil
}

// recoverAndRewind handles a failed checkpoint: back off, Recover, rewind.
// After a failed background commit the first Recover is not delayed: a
// decided checkpoint Doris aborted is healed at once.
func (c *Connector) recoverAndRewind(ctx context.Context, cause error) error {
	c.o.logger.Warn("checkpoint failed; recovering and rewinding", "failures", c.fail.n, "err", cause)
	wait := (!errors.Is(cause, errCommitFailed) || c.fail.n > 1) && !(c.bisect != nil && errors.Is(cause, doris.ErrDataQuality))
	raw, err := c.recoverSink(ctx, wait)
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

// errDrainRequested ends a backoff wait outside a drain when Drain is
// called.
var errDrainRequested = errors.New("drain requested")

// recoverSink calls Recover until it succeeds, ctx ends, Drain is called
// (errDrainRequested, outside a drain), the error is one Recover cannot
// fix, or an unfixable one outlasted the fail-fast grace; it backs off
// before the first call when wait is set, and before every retry.
func (c *Connector) recoverSink(ctx context.Context, wait bool) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		if wait || attempt > 0 {
			if err := c.backoff(ctx); err != nil {
				return nil, err
			}
		}
		c.metrics.Recovers.Add(1)
		raw, err := c.sink.Recover(ctx)
		if err == nil {
			if pos, ok, perr := ParsePosition(raw); perr == nil && ok {
				c.setDecided(pos)
			}
			return raw, nil
		}
		if ctx.Err() != nil {
			return nil, errors.Join(ctx.Err(), err)
		}
		c.metrics.RecoverFailures.Add(1)
		if terminalRecoverError(err) {
			return nil, fmt.Errorf("recover: %w", err)
		}
		if ferr := c.noteFailure(err); ferr != nil {
			return nil, fmt.Errorf("recover: %w", ferr)
		}
		c.o.logger.Warn("recover failed; retrying", "attempt", attempt+1, "failures", c.fail.n, "err", err)
	}
}

func terminalRecoverError(err error) bool {
	var unresolved *loader.UnresolvedError
	var fencing *loader.FencingError
	var owner *checkpoint.OwnerError
	return errors.Is(err, loader.ErrCrashed) || errors.Is(err, loader.ErrClosed) || errors.Is(err, checkpoint.ErrFenced) ||
		errors.Is(err, ErrNotOwner) ||
		errors.As(err, &unresolved) || errors.As(err, &fencing) || errors.As(err, &owner)
}

// backoff waits backoffDelay on the Connector's clock. Outside a drain it
// returns errDrainRequested as soon as Drain is called.
func (c *Connector) backoff(ctx context.Context) error {
	var drainCh <-chan struct{}
	if !c.inDrain {
		if c.draining() {
			return errDrainRequested
		}
		drainCh = c.drainCh
	}
	d := c.backoffDelay()
	if d <= 0 {
		return ctx.Err()
	}
	if c.knobs.BeforeBackoff != nil {
		c.knobs.BeforeBackoff(d)
	}
	select {
	case <-c.o.clock.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-drainCh:
		return errDrainRequested
	}
}
