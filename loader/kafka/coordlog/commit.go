package coordlog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Commit writes value as the log key's new record and, when offs is not
// nil and Config.Group is set, commits offs to the group, all in one Kafka
// transaction: after Commit returns nil both are durable and visible to
// read_committed readers; after an error neither is, or (when the end of
// the transaction could not be confirmed) the next Load finds out which.
// A retriable Kafka error (coordinator not available, not coordinator,
// concurrent transactions, a broker restarting) aborts the transaction and
// tries again, at most Config.Attempts transactions with a doubling
// backoff. Fencing returns a *FencedError (ErrFenced) at once, and so does
// every later call.
func (l *Log) Commit(ctx context.Context, value []byte, offs *Offsets) error {
	return l.CommitWith(ctx, value, offs, Extra{})
}

// Extra are records a Commit produces in its transaction besides the
// state record (the checkpoint's dead letters, its evidence records).
type Extra struct {
	// Records each have their topic and partition set (the client's
	// partitioner is manual).
	Records []*kgo.Record
	// BatchBytes bounds the record batches of a topic not in TopicBytes
	// (the dead-letter topic's max.message.bytes); 0: the client's
	// default.
	BatchBytes int64
	// TopicBytes bounds the record batches per topic (its
	// max.message.bytes), e.g. the evidence topic's: topics differ.
	TopicBytes map[string]int64
}

// bound returns the batch bound of topic (0: none).
func (e Extra) bound(topic string) int64 {
	if n, ok := e.TopicBytes[topic]; ok {
		return n
	}
	return e.BatchBytes
}

// CommitWith is Commit producing extra records in the same transaction:
// they become visible to read_committed readers together with the state
// record and the offsets, or not at all. Every attempt produces them again
// in its own transaction.
func (l *Log) CommitWith(ctx context.Context, value []byte, offs *Offsets, extra Extra) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	recovered := l.unresolved != nil
	if err := l.resolve(ctx); err != nil {
		return err
	}
	wait := l.cfg.Backoff
	for attempt := 1; ; attempt++ {
		if recovered || attempt > 1 {
			// A failed transaction's abort may have re-initialised the
			// producer id (franz-go's KIP-360 recovery). A broker that
			// accepted a stale epoch there would have handed this
			// incarnation the epoch back from a newer one: never write
			// over what a newer incarnation committed.
			if err := l.checkNoNewer(ctx); err != nil {
				return err
			}
		}
		err := l.commitOnce(ctx, value, offs, extra)
		if err == nil {
			return nil
		}
		var ge *GenerationError
		var no *NotOwnerError
		if errors.As(err, &ge) || errors.As(err, &no) {
			// Never resent (KIP-447): the slot's owner of the new
			// generation resolves the checkpoint.
			return fmt.Errorf("coordinator log %s: commit (attempt %d): %w", l.topic, attempt, err)
		}
		if errors.Is(err, ErrFenced) || errors.Is(err, ErrCrashed) || l.unresolved != nil || !retriable(err) || attempt >= l.cfg.Attempts || ctx.Err() != nil {
			return fmt.Errorf("coordinator log %s: commit (attempt %d of at most %d): %w", l.topic, attempt, l.cfg.Attempts, err)
		}
		l.log.Warn("coordinator log: transaction failed; retrying", "state_topic", l.topic, "attempt", attempt, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("coordinator log %s: commit: %w (after %w)", l.topic, ctx.Err(), err)
		}
		wait *= 2
	}
}

// retriable reports whether a failed transaction may be tried again.
func retriable(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && ke.Retriable || errors.Is(err, kerr.TransactionAbortable) ||
		errors.Is(err, kerr.OperationNotAttempted)
}

// commitOnce runs one transaction: produce (extra, then the state
// record), commit offsets, end.
func (l *Log) commitOnce(ctx context.Context, value []byte, offs *Offsets, extra Extra) error {
	withOffsets := offs != nil && l.cfg.Group != "" && offs.hasPartitions()
	stamp := GroupStamp{Generation: -1}
	if withOffsets && l.cfg.Stamp != nil {
		// Checked when the transaction begins, not when the offsets are
		// sent: the generation the ownership held in is what Kafka checks.
		var err error
		if stamp, err = l.cfg.Stamp(); err != nil {
			return fmt.Errorf("membership check before the decision: %w", err)
		}
	}
	if err := l.cl.BeginTransaction(); err != nil {
		return l.classify(fmt.Errorf("begin transaction: %w", err))
	}
	rec := &kgo.Record{Topic: l.topic, Partition: 0, Key: []byte(l.key), Value: value, Headers: []kgo.RecordHeader{
		{Key: HeaderFormat, Value: []byte(formatHeader())},
		{Key: HeaderIncarnation, Value: []byte(l.inc.Token)},
	}}
	if len(extra.Records) > 0 {
		if err := produceAll(ctx, l.cl, extra); err != nil {
			return l.abort(ctx, err)
		}
	}
	if err := l.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return l.abort(ctx, fmt.Errorf("produce the state record: %w", err))
	}
	if withOffsets {
		if err := l.commitOffsets(ctx, offs, stamp); err != nil {
			return l.abortGeneration(ctx, err)
		}
	}
	letters := l.hasDeadLetters(extra)
	if letters {
		if err := l.fire(FailDeadLettersProduced); err != nil {
			return err // crashed: the transaction stays open, as a killed process leaves it
		}
	}
	if err := l.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return l.abort(ctx, fmt.Errorf("end transaction (commit): %w", err))
	}
	if letters {
		if err := l.fire(FailDeadLettersCommitted); err != nil {
			return err
		}
	}
	return nil
}

// hasDeadLetters reports whether extra holds a record besides the job's
// evidence records (the dead-letter cut points fire only then).
func (l *Log) hasDeadLetters(extra Extra) bool {
	ev := EvidenceTopic(l.cfg.Job)
	for _, r := range extra.Records {
		if r.Topic != ev {
			return true
		}
	}
	return false
}

// produceAll produces extra's records (copies: a failed attempt's records
// are produced again by the next one) and waits for every
// acknowledgement. With a batch bound they go in chunks whose total,
// record framing included, stays within it, each acknowledged before the
// next is produced, so that no record batch exceeds the topic's
// max.message.bytes (franz-go batches records of one partition up to its
// own 1 MB cap; a bigger batch would be refused again at every attempt).
func produceAll(ctx context.Context, cl *kgo.Client, extra Extra) error {
	recs := extra.Records
	for len(recs) > 0 {
		// One chunk holds records of one topic, within its bound.
		bound := extra.bound(recs[0].Topic)
		limit := bound - batchOverhead
		n, size := 0, int64(0)
		for n < len(recs) {
			s := framedSize(recs[n])
			if n > 0 && (recs[n].Topic != recs[0].Topic || bound > 0 && size+s > limit) {
				break
			}
			size += s
			n++
		}
		if err := produceChunk(ctx, cl, recs[:n], len(extra.Records)); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// batchOverhead is a record batch's header (61 bytes), rounded up.
const batchOverhead = 128

// framedSize bounds r's size inside a record batch: key, value, headers
// and their varint framing.
func framedSize(r *kgo.Record) int64 {
	n := int64(len(r.Key)+len(r.Value)) + 24
	for _, h := range r.Headers {
		n += int64(len(h.Key)+len(h.Value)) + 8
	}
	return n
}

func produceChunk(ctx context.Context, cl *kgo.Client, recs []*kgo.Record, total int) error {
	cp := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		cp[i] = &kgo.Record{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Headers: r.Headers,
			Timestamp: r.Timestamp}
	}
	var errs []error
	for _, pr := range cl.ProduceSync(ctx, cp...) {
		if pr.Err != nil && len(errs) < maxListedPartitions {
			errs = append(errs, fmt.Errorf("%s/%d: %w", pr.Record.Topic, pr.Record.Partition, pr.Err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("produce %d extra records (dead letters, evidence) in the transaction: %w", total, errors.Join(errs...))
	}
	return nil
}

// abortTimeout bounds the abort of a failed transaction.
const abortTimeout = 30 * time.Second

// abort ends the open transaction with an abort after cause. When the end
// cannot be confirmed, the log is marked unresolved: the next call resolves
// it before anything else.
func (l *Log) abort(ctx context.Context, cause error) error {
	cause = l.classify(cause)
	if errors.Is(cause, ErrFenced) {
		return cause
	}
	// The caller's ctx may have ended (that can be why the transaction
	// failed): abort within a budget of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	if err := l.cl.AbortBufferedRecords(ctx); err != nil {
		l.unresolved = err
		return errors.Join(cause, fmt.Errorf("abort buffered records: %w", err))
	}
	if err := l.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		if err := l.classify(err); errors.Is(err, ErrFenced) {
			return err
		}
		l.unresolved = err
		return errors.Join(cause, fmt.Errorf("abort transaction: %w", err))
	}
	return cause
}

// abortGeneration aborts the transaction after a failed offset commit; a
// *GenerationError is returned as such only when the abort is confirmed
// (otherwise the outcome is for the next Load to resolve, like any failed
// commit whose end is unknown).
func (l *Log) abortGeneration(ctx context.Context, err error) error {
	var ge *GenerationError
	if !errors.As(err, &ge) {
		return l.abort(ctx, err)
	}
	aerr := l.abort(ctx, err)
	if l.unresolved != nil || errors.Is(aerr, ErrFenced) {
		return aerr
	}
	l.log.Warn("coordinator log: decision refused for its group generation; transaction aborted, not resent",
		"state_topic", l.topic, "transactional_id", l.txnID, "group", l.cfg.Group, "stamp", ge.Stamp.String(), "err", ge.Err)
	return ge
}

// resolve ends a transaction whose end was unknown (retrying the abort,
// which re-initialises the producer id when the outcome was unconfirmed:
// the epoch bump aborts it if it is still open and waits for it if it was
// committing).
func (l *Log) resolve(ctx context.Context) error {
	if l.unresolved == nil {
		return nil
	}
	if err := l.cl.AbortBufferedRecords(ctx); err != nil {
		return fmt.Errorf("coordinator log %s: resolve the previous transaction: %w", l.topic, err)
	}
	if err := l.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		if err := l.classify(err); errors.Is(err, ErrFenced) {
			return err
		}
		return fmt.Errorf("coordinator log %s: resolve the previous transaction (it failed with %v): %w", l.topic, l.unresolved, err)
	}
	l.unresolved = nil
	return nil
}

// maxListedPartitions bounds the refused partitions an error lists.
const maxListedPartitions = 8

// commitOffsets adds the group to the transaction and commits offs in it,
// stamped with the member's id and generation (group mode), or generation
// -1 and no member (standalone: the run is not a group member; see the
// package documentation). Any partition refused fails the whole commit; a
// refused stamp is a *GenerationError.
func (l *Log) commitOffsets(ctx context.Context, offs *Offsets, stamp GroupStamp) error {
	id, epoch, err := l.cl.ProducerID(ctx)
	if err != nil {
		return l.classify(fmt.Errorf("producer id: %w", err))
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = l.txnID, id, epoch, l.cfg.Group
	aresp, err := add.RequestWith(ctx, l.cl)
	if err == nil {
		err = kerr.ErrorForCode(aresp.ErrorCode)
	}
	if err != nil {
		return l.classify(fmt.Errorf("add offsets of group %s to the transaction: %w", l.cfg.Group, err))
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = l.txnID, l.cfg.Group, id, epoch
	req.Generation, req.MemberID, req.InstanceID = stamp.Generation, stamp.MemberID, stamp.InstanceID
	all := offs.nonEmpty()
	for _, to := range all {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = to.Topic, to.TopicID
		if rt.TopicID == ([16]byte{}) {
			if rt.TopicID, err = l.TopicID(ctx, to.Topic); err != nil {
				return err
			}
		}
		for _, p := range slices.Sorted(maps.Keys(to.Partitions)) {
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, to.Partitions[p], -1
			md := offs.Metadata
			rp.Metadata = &md
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, l.cl)
	if err != nil {
		return l.classify(fmt.Errorf("commit offsets to group %s in the transaction: %w", l.cfg.Group, err))
	}
	if gerr := generationRefusal(resp); gerr != nil {
		return &GenerationError{Job: l.cfg.Job, Scope: l.cfg.Scope, TransactionalID: l.txnID, Group: l.cfg.Group,
			Stamp: stamp, Err: gerr}
	}
	var errs []error
	refused := 0
	for _, t := range resp.Topics {
		to := &all[0]
		for i := range all {
			if all[i].Topic == t.Topic {
				to = &all[i]
			}
		}
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				if refused++; refused <= maxListedPartitions {
					errs = append(errs, fmt.Errorf("%s/%d@%d: %w", to.Topic, p.Partition, to.Partitions[p.Partition], err))
				}
			}
		}
	}
	if refused > maxListedPartitions {
		errs = append(errs, fmt.Errorf("and %d more partitions refused", refused-maxListedPartitions))
	}
	if len(errs) > 0 {
		return l.classify(fmt.Errorf("commit offsets to group %s in the transaction: %w", l.cfg.Group, errors.Join(errs...)))
	}
	return nil
}

// generationRefusal returns the first partition error of resp that
// refuses the membership stamp, nil if none.
func generationRefusal(resp *kmsg.TxnOffsetCommitResponse) error {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil && isGenerationKafka(err) {
				return fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// TopicID returns the current topic ID of topic (from a metadata request).
func (l *Log) TopicID(ctx context.Context, topic string) ([16]byte, error) {
	td, err := l.adm.ListTopics(ctx, topic)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return [16]byte{}, fmt.Errorf("topic ID of %s: %w", topic, err)
	}
	d, ok := td[topic]
	if !ok {
		return [16]byte{}, fmt.Errorf("topic ID of %s: %w", topic, kerr.UnknownTopicOrPartition)
	}
	return d.ID, nil
}

// hasPartitions reports whether any topic of o (the first or Others) has a
// partition: a writer slot may own no partition of the first topic
// (sorted) and still decide offsets of another, and that decision must be
// stamped and committed as well.
func (o *Offsets) hasPartitions() bool {
	return len(o.nonEmpty()) > 0
}

// nonEmpty returns the topics of o (the first, then Others) that have a
// partition: an empty topic is left out of the TxnOffsetCommit request.
func (o *Offsets) nonEmpty() []Offsets {
	var out []Offsets
	for _, to := range append([]Offsets{*o}, o.Others...) {
		if len(to.Partitions) > 0 {
			out = append(out, to)
		}
	}
	return out
}
