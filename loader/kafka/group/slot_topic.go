package group

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// SlotTopicError is a slot topic (coordlog.SlotTopic) that cannot serve
// the job's group: it exists with another partition count than job.slots
// (the slots the group would assign are not the job's), or it cannot be
// described or created.
type SlotTopicError struct {
	// Topic is the slot topic; Job the job.
	Topic, Job string
	// Partitions is the topic's partition count (0 when unknown); Slots
	// is job.slots.
	Partitions, Slots int
	// Err is the Kafka error, if any.
	Err error
}

// Error names both counts and the way out.
func (e *SlotTopicError) Error() string {
	if e.Err != nil && e.Slots <= 1 {
		// A standalone job: its one-partition slot topic guards its layout.
		return fmt.Sprintf("job %s: slot topic %s: %v (every run of the job with job.coordinator kafka needs DESCRIBE "+
			"on it, and CREATE on the cluster or the topic for its first start, or create it with 1 partition)",
			e.Job, e.Topic, e.Err)
	}
	if e.Err != nil {
		return fmt.Sprintf("job %s: slot topic %s: %v (group mode needs DESCRIBE on it, and CREATE on the cluster or the "+
			"topic for its first start, or create it with %d partitions)", e.Job, e.Topic, e.Err, e.Slots)
	}
	return fmt.Sprintf("job %s: slot topic %s has %d partitions but job.slots is %d: its partitions are the job's writer "+
		"slots, so the group would assign slots the job does not have. Nothing was loaded. Set job.slots back to %d, or stop "+
		"every member and run `doris-sink checkpoint reslot -c <job config> --slots %d` (it re-slots the state and the slot topic)",
		e.Job, e.Topic, e.Partitions, e.Slots, e.Partitions, e.Slots)
}

// Unwrap returns the Kafka error.
func (e *SlotTopicError) Unwrap() error { return e.Err }

// slotTopicTimeout bounds describing and creating the slot topic.
const slotTopicTimeout = time.Minute

// EnsureSlotTopic makes sure job's slot topic (coordlog.SlotTopic) exists
// with slots partitions, over a client of its own built from clientOpts
// (the options that reach the brokers). A member's Run calls it before it
// joins; a standalone writer of a one-slot job should call it too (with
// slots 1) before its store opens. CreateTopics is atomic, so of two
// starts of one fresh job with different slot counts one creates the
// topic and the other gets TOPIC_ALREADY_EXISTS, describes it and is
// refused (*SlotTopicError naming both counts) before it reads or loads
// anything.
//
// An answer retrying can fix — a broker not reachable yet (a member
// started while the cluster restarts), a retriable Kafka error, an attempt
// that timed out — is tried again with a fresh client (a client whose
// first dials failed can keep stale metadata) after a doubling backoff
// (100 ms to 5 s), for a minute in all; a partition-count mismatch or an
// answer retrying cannot fix (an authorization failure) returns at once.
func EnsureSlotTopic(ctx context.Context, clientOpts []kgo.Opt, job string, slots int) error {
	ctx, cancel := context.WithTimeout(ctx, slotTopicTimeout)
	defer cancel()
	return retrySlotTopic(ctx, func(ctx context.Context) error {
		cl, err := kgo.NewClient(clientOpts...)
		if err != nil {
			return fmt.Errorf("job %s: slot topic %s: kafka client: %w", job, coordlog.SlotTopic(job), err)
		}
		defer cl.Close()
		return ensureSlotTopic(ctx, cl, job, slots)
	})
}

// slotTopicAttempt bounds one attempt of retrySlotTopic.
const slotTopicAttempt = 10 * time.Second

// retrySlotTopic runs attempt, each try bounded by slotTopicAttempt, until
// it returns nil or an error retrying cannot fix, or ctx ends (then the
// last error).
func retrySlotTopic(ctx context.Context, attempt func(context.Context) error) error {
	wait := 100 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, slotTopicAttempt)
		err := attempt(actx)
		cancel()
		if err == nil || !slotTopicRetriable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (retried for %v)", err, slotTopicTimeout)
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// slotTopicRetriable tells whether err may go away on its own: not a
// partition-count mismatch, not a Kafka answer kerr marks non-retriable.
func slotTopicRetriable(err error) bool {
	var se *SlotTopicError
	if errors.As(err, &se) && se.Err == nil {
		return false // another partition count: an operator's decision
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	return true // dial refused, connection reset, an attempt timed out
}

// ensureSlotTopic makes sure job's slot topic exists with slots
// partitions: it creates it (slots partitions, the broker's default
// replication factor) when missing, and refuses one with another
// partition count (*SlotTopicError naming both).
func ensureSlotTopic(ctx context.Context, cl *kgo.Client, job string, slots int) error {
	ctx, cancel := context.WithTimeout(ctx, slotTopicTimeout)
	defer cancel()
	topic := coordlog.SlotTopic(job)
	fail := func(err error) error { return &SlotTopicError{Topic: topic, Job: job, Slots: slots, Err: err} }
	n, err := topicPartitions(ctx, cl, topic)
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		resp, cerr := kadm.NewClient(cl).CreateTopic(ctx, int32(slots), -1, nil, topic)
		if cerr == nil {
			cerr = resp.Err
		}
		switch {
		case cerr == nil:
			return nil // created with slots partitions
		case !errors.Is(cerr, kerr.TopicAlreadyExists):
			return fail(fmt.Errorf("create: %w", cerr))
		}
		n, err = topicPartitions(ctx, cl, topic) // created meanwhile by another member
	}
	if err != nil {
		return fail(err)
	}
	if n != slots {
		return &SlotTopicError{Topic: topic, Job: job, Partitions: n, Slots: slots}
	}
	return nil
}

// topicPartitions asks a broker for topic's partition count (a metadata
// request of its own: kadm's answers may come from a cache seconds old).
func topicPartitions(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("describe: %w", err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return 0, err
		}
		return len(t.Partitions), nil
	}
	return 0, kerr.UnknownTopicOrPartition
}
