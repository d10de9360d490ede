package coordlog

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// ErrFenced is wrapped by every error of a Log whose incarnation was fenced
// by a newer one (the same job and scope opened again, here or elsewhere).
// It is checkpoint.ErrFenced, so callers of a checkpoint.Store can test for
// it without importing this package. Treat it as fatal: never retry, decide
// nothing more.
var ErrFenced = checkpoint.ErrFenced

// FencedError is a write refused because a newer incarnation of the same
// writer (transactional id) opened the log. It wraps ErrFenced and the
// Kafka error (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) or a description of
// the newer record found.
type FencedError struct {
	// Job, StateTopic and TransactionalID name the log.
	Job, StateTopic, TransactionalID string
	// Incarnation is the fenced (this process's) incarnation.
	Incarnation Incarnation
	// Err is the cause.
	Err error
}

// Error names the job, the state topic and what to do.
func (e *FencedError) Error() string {
	return fmt.Sprintf("job %s: fenced: another doris-sink process opened the same job (state topic %s, transactional id %s) "+
		"after this one (incarnation %s) and owns its decisions now; this process stops without deciding anything more "+
		"(two processes of one job config must not run at once): %v",
		e.Job, e.StateTopic, e.TransactionalID, e.Incarnation, e.Err)
}

// Unwrap returns ErrFenced and the cause.
func (e *FencedError) Unwrap() []error { return []error{ErrFenced, e.Err} }

// isFencedKafka reports whether err is Kafka's answer to a write of a fenced
// producer epoch.
func isFencedKafka(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

// TopicError is a state topic that cannot be used: it does not exist and
// cannot be created, or it exists without cleanup.policy=compact, or its
// configuration cannot be read. The message names the topic and the ACL or
// the configuration needed.
type TopicError struct {
	// Topic is the state topic.
	Topic string
	// Reason says what is wrong and how to fix it.
	Reason string
	// Err is the Kafka error, if any.
	Err error
	// Role names the topic's role in messages: "" is "state topic", else
	// e.g. "evidence topic".
	Role string
}

// Error returns "<role> <topic>: <reason>: <err>" (role "state topic"
// unless Role is set).
func (e *TopicError) Error() string {
	role := "state topic"
	if e.Role != "" {
		role = e.Role
	}
	s := role + " " + e.Topic + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the Kafka error.
func (e *TopicError) Unwrap() error { return e.Err }

// TopicRecreatedError is a source topic whose topic ID differs from the one
// recorded with the job's positions: the topic was deleted and created
// again, and the stored offsets belong to a log that no longer exists.
// Nothing is loaded; the operator decides where the job continues.
type TopicRecreatedError struct {
	// Job and StateTopic name the log holding the positions.
	Job, StateTopic string
	// Topic is the source topic; StoredID and CurrentID its topic IDs.
	Topic, StoredID, CurrentID string
	// Positions is the last recorded position (decided end or persisted
	// first start), "" if none.
	Positions string
}

// Is matches kafka.ErrTopicRecreated (as the Connector's refusal while it
// runs, *kafka.TopicRecreatedError, does).
func (e *TopicRecreatedError) Is(target error) bool { return target == kafka.ErrTopicRecreated }

// Error says which topic, what is affected and the deliberate way out.
func (e *TopicRecreatedError) Error() string {
	pos := ""
	if e.Positions != "" {
		pos = " (" + e.Positions + ")"
	}
	return fmt.Sprintf("job %s: source topic %s was deleted and recreated: its topic ID is %s, the positions recorded in state topic %s "+
		"belong to topic ID %s; every partition of the job is affected: the recorded offsets%s point into a log that no longer exists, "+
		"so applying them would skip or re-read records. Nothing was loaded. To load the new topic deliberately, stop the job "+
		"and rebase it: `doris-sink checkpoint rebase -c <job config> --to earliest --dry-run` (or --to latest, or --offsets "+
		"<partition>=<offset>,...), then the same with --yes; the rebase is recorded as an operator decision in the state topic and the ledger",
		e.Job, e.Topic, e.CurrentID, e.StateTopic, e.StoredID, pos)
}
