package checkpoint

import (
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is returned by a Store used after Close (or, for Memory, after
// Crash abandoned the handle).
var ErrClosed = errors.New("checkpoint store closed")

// ErrUnsynced is wrapped by the errors of a FileStore whose last Save
// failed after its rename was attempted (the rename or the directory fsync
// failed): what the file holds, and whether it is durable, is unknown. Save
// refuses until Load has re-read the file and made it durable again;
// the failed Save, the refused ones and a Load that cannot re-sync return
// errors wrapping ErrUnsynced.
var ErrUnsynced = errors.New("checkpoint store state unknown after a failed save")

// ErrResyncFailed is wrapped (with ErrUnsynced) by the error of a
// FileStore Load that could not re-sync the store after such a Save: the
// disk refuses to make the state durable again. Unlike the failed Save
// itself (which a re-sync may fix), retrying does not help.
var ErrResyncFailed = errors.New("re-syncing the checkpoint store failed")

// InvariantError is a State that breaks an invariant of the package
// documentation. Save refuses it and writes nothing; Load returns it inside
// a *CorruptError.
type InvariantError struct {
	// Checkpoint is the id concerned, 0 when the rule is not about one.
	Checkpoint uint64
	// Reason says which rule is broken and by which values.
	Reason string
}

// Error returns "checkpoint <id>: <reason>" or "checkpoint state: <reason>".
func (e *InvariantError) Error() string {
	if e.Checkpoint == 0 {
		return "checkpoint state: " + e.Reason
	}
	return fmt.Sprintf("checkpoint %d: %s", e.Checkpoint, e.Reason)
}

// CorruptError is a stored state that cannot be trusted: truncated, not the
// expected format or version, failing its checksum, or breaking an
// invariant. The store is never reset on its own; the message says how to
// proceed.
type CorruptError struct {
	// Path is the file, "" when decoding bytes (Decode).
	Path string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any (e.g. *InvariantError).
	Err error
}

// Error names the file, what is wrong and how to proceed.
func (e *CorruptError) Error() string {
	var b strings.Builder
	b.WriteString("checkpoint store")
	if e.Path != "" {
		fmt.Fprintf(&b, " file %s", e.Path)
	}
	b.WriteString(" is corrupt: ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Path != "" {
		b.WriteString("; refusing to start: restore the file from a backup, or rebuild it from the evidence ledger " +
			"(ledger.jsonl) and Doris label states; do not delete it, a fresh store forgets the commit decisions")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *CorruptError) Unwrap() error { return e.Err }

// LockedError is returned by OpenFile when another store (another process,
// or another OpenFile in this process) holds the directory's lock.
type LockedError struct {
	// Dir is the store directory.
	Dir string
	// PID is the process id recorded by the holder, 0 if unknown.
	PID int
}

// Error names the directory and the holder's PID when known.
func (e *LockedError) Error() string {
	holder := "another store"
	if e.PID > 0 {
		holder = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("checkpoint store %s is locked by %s: only one writer may use a store "+
		"(docs/design.md §3); stop the other doris-sink or use another job.data_dir", e.Dir, holder)
}

// OwnerError is a store that belongs to another job, table, source or
// writer than the one opening it or saving to it (docs/design.md §3).
type OwnerError struct {
	// Dir is the store directory ("" for Memory).
	Dir string
	// Stored is the owner recorded in the store.
	Stored Owner
	// Config is the owner asked for.
	Config Owner
}

// Error names both owners and the fields that differ.
func (e *OwnerError) Error() string {
	var diff []string
	add := func(name, a, b string) {
		if a != b {
			diff = append(diff, fmt.Sprintf("%s %q≠%q", name, a, b))
		}
	}
	add("job", e.Stored.Job, e.Config.Job)
	add("db", e.Stored.DB, e.Config.DB)
	add("table", e.Stored.Table, e.Config.Table)
	add("source", e.Stored.Source, e.Config.Source)
	add("writer", e.Stored.Writer, e.Config.Writer)
	where := "checkpoint store"
	if e.Dir != "" {
		where += " at " + e.Dir
	}
	return fmt.Sprintf("%s belongs to %s; config says %s (differs in %s): two writers must never share a "+
		"label prefix's store (docs/design.md §3); fix job.name/doris.table/kafka.topic or use another job.data_dir",
		where, e.Stored, e.Config, strings.Join(diff, ", "))
}
