package kafka

import (
	"errors"
	"fmt"
	"time"

	"github.com/doris-sink/doris-sink/doris/safetext"
)

// ErrRunTwice is returned by Run when it was called before.
var ErrRunTwice = errors.New("kafka connector: Run was already called")

// RecordError is a record that cannot be converted to a row. Without a
// dead-letter topic it ends Run; nothing of the open checkpoint is
// decided, and a restart reads the record again.
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	// Format is the configured record format.
	Format string
	// Err says why.
	Err error
}

// Error names the record and the reason (control characters escaped:
// the reason may quote the record).
func (e *RecordError) Error() string {
	return fmt.Sprintf("record %s/%d@%d cannot be converted as %s: %s", e.Topic, e.Partition, e.Offset, e.Format, safetext.Escape(e.Err.Error()))
}

// Unwrap returns Err.
func (e *RecordError) Unwrap() error { return e.Err }

// ErrRecordTooBig is wrapped by the *RecordError of a record whose key or
// headers pass their bound (Config.MaxKeyBytes, MaxHeadersBytes).
var ErrRecordTooBig = errors.New("record too big")

// DeadLetterError is a failure to produce a bad record to the dead-letter
// topic; Run ends with it (the record is not skipped).
type DeadLetterError struct {
	Record *RecordError
	Topic  string
	Err    error
}

// Error names the record, the dead-letter topic and the cause.
func (e *DeadLetterError) Error() string {
	return fmt.Sprintf("dead-letter %s/%d@%d to %s: %v", e.Record.Topic, e.Record.Partition, e.Record.Offset, e.Topic, e.Err)
}

// Unwrap returns Err.
func (e *DeadLetterError) Unwrap() error { return e.Err }

// DrainError is a drain whose final checkpoint kept failing until the
// drain timeout (WithDrainTimeout) passed, or a Drain that came while the
// Connector was failing to start or to recover (Attempts 0). Nothing is
// lost: every failed
// checkpoint's transactions were aborted (or are resolved by Recover at the
// next start, docs/design.md §2), and the next start resumes from the last
// decided position. It wraps the last checkpoint failure (which wraps
// loader.ErrNeedRecover).
type DrainError struct {
	// Attempts counts the tries to checkpoint the drained records: the
	// first and one per Recover and re-read after a failure; 0 when the
	// drain ended before any (while starting up or recovering).
	Attempts int
	// Timeout is the drain timeout that passed.
	Timeout time.Duration
	// Resume is the last decided position (JSON, see Position), where the
	// next start resumes; "" before the first decided checkpoint (the next
	// start then uses kafka.start again).
	Resume string
	// Err is the last checkpoint failure.
	Err error
}

// Error says that the drain gave up, that nothing is lost and where the
// next start resumes.
func (e *DrainError) Error() string {
	resume := "the last decided position " + e.Resume
	if e.Resume == "" || e.Resume == "null" {
		resume = "the first-start position (no checkpoint was decided yet)"
	}
	if e.Attempts == 0 {
		return fmt.Sprintf("drain: stopped while failing to start or recover, before the records read could be "+
			"checkpointed; nothing is lost (nothing more was decided): the next start recovers and resumes from %s: %v",
			resume, e.Err)
	}
	return fmt.Sprintf("drain: the final checkpoint failed %d time(s) within the drain timeout %v; nothing is lost "+
		"(its transactions were aborted): the next start resumes from %s: %v", e.Attempts, e.Timeout, resume, e.Err)
}

// Unwrap returns Err.
func (e *DrainError) Unwrap() error { return e.Err }

// ErrNotOwner is wrapped by a decision refused because this process no
// longer owns what it decides (group mode: the writer slot moved to
// another member, or the group's generation moved on; see
// coordlog.NotOwnerError and coordlog.GenerationError). Nothing of the
// decision is visible. Run stops with it at once, without Recover or
// retry: the slot's owner resolves the open checkpoint as an inheritor.
var ErrNotOwner = errors.New("not the owner of the partitions decided")
