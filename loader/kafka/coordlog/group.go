package coordlog

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// GroupStamp is the consumer-group membership a decision is written under
// in group mode (KIP-447): the TxnOffsetCommit of the decision's
// transaction carries it, and the group coordinator refuses the offsets
// (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ...) when the
// membership moved on since, so that a member that lost the slot in a
// rebalance cannot decide for it.
type GroupStamp struct {
	// MemberID and Generation are the member's id and the group
	// generation in which the slot's ownership was checked.
	MemberID   string
	Generation int32
	// InstanceID is the static member id (job.instance), nil for none.
	InstanceID *string
}

// String returns "member <id> generation <n>".
func (s GroupStamp) String() string {
	str := fmt.Sprintf("member %s generation %d", s.MemberID, s.Generation)
	if s.InstanceID != nil {
		str += " instance " + *s.InstanceID
	}
	return str
}

// NotOwnerError is a decision not attempted: at the moment its
// transaction was to begin, the member's current assignment did not hold
// the writer slot (Config.Stamp). Nothing was written. It wraps
// kafka.ErrNotOwner.
type NotOwnerError struct {
	// Job and Scope name the writer slot; Group the consumer group.
	Job, Scope, Group string
	// Reason says what the membership holds instead.
	Reason string
}

// Error names the slot and the group.
func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("job %s writer slot %s: this member of consumer group %s does not own the slot now (%s): "+
		"the decision was not written; the slot's new owner resolves the open checkpoint", e.Job, e.Scope, e.Group, e.Reason)
}

// Unwrap returns kafka.ErrNotOwner.
func (e *NotOwnerError) Unwrap() error { return kafka.ErrNotOwner }

// GenerationError is a decision the group coordinator refused for its
// membership stamp: the member was not (or no longer) the member of the
// generation it stamped the TxnOffsetCommit with (ILLEGAL_GENERATION,
// REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
// STALE_MEMBER_EPOCH). The transaction was aborted: nothing of the
// decision is visible, and it is never resent (the slot's owner of the
// new generation resolves the open checkpoint as an inheritor). When the
// abort itself could not be confirmed the error is not a GenerationError
// but "maybe saved" (the next Load resolves it). It wraps
// kafka.ErrNotOwner and the Kafka error.
type GenerationError struct {
	// Job, Scope and TransactionalID name the writer slot's log; Group
	// the consumer group.
	Job, Scope, TransactionalID, Group string
	// Stamp is the membership the refused commit carried.
	Stamp GroupStamp
	// Err is Kafka's answer.
	Err error
}

// Error names the slot, the stamp and the answer.
func (e *GenerationError) Error() string {
	return fmt.Sprintf("job %s writer slot %s (transactional id %s): consumer group %s refused the decision's offsets "+
		"stamped %s: %v; the transaction was aborted and is not resent (the slot's owner of the new generation resolves the "+
		"open checkpoint)", e.Job, e.Scope, e.TransactionalID, e.Group, e.Stamp, e.Err)
}

// Unwrap returns kafka.ErrNotOwner and the Kafka error.
func (e *GenerationError) Unwrap() []error { return []error{kafka.ErrNotOwner, e.Err} }

// isGenerationKafka reports whether err is the group coordinator refusing
// a membership stamp.
func isGenerationKafka(err error) bool {
	return errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.RebalanceInProgress) ||
		errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.FencedInstanceID) ||
		errors.Is(err, kerr.StaleMemberEpoch)
}
