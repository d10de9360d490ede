package registry

import (
	"errors"
	"fmt"

	"github.com/doris-sink/doris-sink/doris/safetext"
)

// ErrUnavailable is matched (errors.Is) by a *FetchError: the registry
// could not give a schema within the retry bound. The record is fine as
// far as anyone knows; it must not be dead-lettered.
var ErrUnavailable = errors.New("schema registry unavailable")

// FetchError is a schema that could not be fetched: the registry was
// unreachable, answered an error, or did not know the id (404) on every
// one of Attempts tries.
type FetchError struct {
	// ID is the schema id.
	ID int
	// Attempts is how many times it was asked for.
	Attempts int
	// Err is the last failure.
	Err error
}

// Error names the schema id, the tries and the last failure.
func (e *FetchError) Error() string {
	return fmt.Sprintf("schema id %d: %v after %d attempt(s): %s", e.ID, ErrUnavailable, e.Attempts, safetext.Escape(e.Err.Error()))
}

// Unwrap returns ErrUnavailable and the last failure.
func (e *FetchError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// RecordError is a record that cannot be decoded: not the wire format, a
// schema of a type the job does not read, a schema no decoder can compile,
// or a payload that does not decode with its schema. Retrying does not
// help; the connector dead-letters it.
type RecordError struct {
	// ID is the schema id (0 when the header could not be read).
	ID int
	// Err says what is wrong (a *WireError, or the decoder's error naming
	// the field and byte offset).
	Err error
}

// Error names the schema id and the reason.
func (e *RecordError) Error() string {
	if e.ID == 0 {
		return safetext.Escape(e.Err.Error())
	}
	return fmt.Sprintf("schema id %d: %s", e.ID, safetext.Escape(e.Err.Error()))
}

// Unwrap returns Err.
func (e *RecordError) Unwrap() error { return e.Err }
