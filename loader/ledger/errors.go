package ledger

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("ledger closed")

// LineError is a malformed line that is not a torn tail: the ledger was
// edited or damaged. It is never skipped or repaired.
type LineError struct {
	// Path is the ledger file, "" when reading from an io.Reader.
	Path string
	// Line is the 1-based line number.
	Line int
	// Err says what is wrong.
	Err error
}

// Error names the file and line and how to proceed.
func (e *LineError) Error() string {
	where := "ledger"
	if e.Path != "" {
		where += " " + e.Path
	}
	return fmt.Sprintf("%s line %d is corrupt: %v (the ledger is never rewritten automatically: "+
		"restore it from a backup, or move it aside to start a new one and keep it for doris-sink verify)",
		where, e.Line, e.Err)
}

// Unwrap returns Err.
func (e *LineError) Unwrap() error { return e.Err }

// TornTail describes a last line without its terminating newline, left by
// a crash during Append. Read reports it as a warning, not an error; Open
// cuts it off (see Ledger.Repaired).
type TornTail struct {
	// Line is the 1-based number of the torn line.
	Line int
	// Offset is the byte offset where it starts (the size kept).
	Offset int64
	// Bytes is the length of the torn fragment.
	Bytes int64
}

// String describes the torn tail for a log line.
func (t *TornTail) String() string {
	return fmt.Sprintf("torn last line %d: %d bytes at offset %d without a newline (crash during append)",
		t.Line, t.Bytes, t.Offset)
}

// LockedError is returned by Open when another Ledger (in this or another
// process) has the file open for appending.
type LockedError struct {
	// Path is the ledger file.
	Path string
}

// Error names the file.
func (e *LockedError) Error() string {
	return fmt.Sprintf("ledger %s is locked by another writer: only one doris-sink may append to it", e.Path)
}
