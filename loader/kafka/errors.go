package kafka

import (
	"errors"
	"fmt"
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

// Error names the record and the reason.
func (e *RecordError) Error() string {
	return fmt.Sprintf("record %s/%d@%d cannot be converted as %s: %v", e.Topic, e.Partition, e.Offset, e.Format, e.Err)
}

// Unwrap returns Err.
func (e *RecordError) Unwrap() error { return e.Err }

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
