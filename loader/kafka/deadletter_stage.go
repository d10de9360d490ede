package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DeadLetterStager makes a checkpoint's dead letters visible exactly once,
// together with its decision: the checkpoint store of job.coordinator
// kafka (coordlog.Store) implements it by producing them in the Kafka
// transaction that writes the decision record and commits the offsets.
// The Connector stages the open checkpoint's dead letters right before it
// asks the loader to decide it, and stages nil after a failed attempt.
type DeadLetterStager interface {
	// StageDeadLetters replaces the staged dead letters with recs (nil:
	// none). The next store write that decides a checkpoint (a new one,
	// or a heal replaying a decided one over whatever range) produces in
	// its transaction those no earlier decision produced (by their
	// source partition and offset: HeaderPartition, HeaderOffset) and
	// drops them all once it is committed. Other writes (announcements,
	// commit marks) leave them staged.
	StageDeadLetters(recs []*kgo.Record)
	// SetDeadLetterBatchBytes tells the largest record batch the
	// dead-letter topic accepts (its max.message.bytes, read at start):
	// the dead letters of one decision must be produced in batches no
	// larger, whatever their total.
	SetDeadLetterBatchBytes(n int64)
}

// WithDeadLetterStager makes dead letters exactly once: they are staged on
// s and produced with the checkpoint's decision (see DeadLetterStager), not
// one by one as they are read. A Connector with Config.DeadLetterTopic
// needs it unless Config.DeadLetterAtLeastOnce is set.
func WithDeadLetterStager(s DeadLetterStager) Opt {
	return optFunc(func(o *options) { o.stager = s })
}

// ErrDeadLetterNeedsStager: a dead-letter topic is configured without a
// DeadLetterStager and without Config.DeadLetterAtLeastOnce.
var ErrDeadLetterNeedsStager = errors.New("records.dead_letter_topic: dead letters are produced exactly once only " +
	"in the Kafka transaction of the checkpoint decision, which needs job.coordinator: kafka; with another " +
	"coordinator set records.dead_letter_delivery: at_least_once (a rewind or crash produces a checkpoint's " +
	"dead letters again) or unset records.dead_letter_topic")

// DefaultDeadLetterBufferBytes is the default of
// Config.DeadLetterBufferBytes.
const DefaultDeadLetterBufferBytes = 16 << 20

// stageDeadLetters hands the open checkpoint's dead letters to the stager
// before its decision (no-op without a stager).
func (c *Connector) stageDeadLetters() {
	if c.o.stager != nil {
		c.o.stager.StageDeadLetters(c.pend.letters)
	}
}

// unstageDeadLetters drops what stageDeadLetters staged after a failed
// checkpoint attempt: the rewind reads the records again.
func (c *Connector) unstageDeadLetters() {
	if c.o.stager != nil {
		c.o.stager.StageDeadLetters(nil)
	}
}
