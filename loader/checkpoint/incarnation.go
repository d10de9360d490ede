package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// maxIncarnationLen bounds State.Incarnation and Decision.Incarnation.
const maxIncarnationLen = 64

// validIncarnation reports whether s is empty or at most
// maxIncarnationLen lower-case hex digits.
func validIncarnation(s string) bool {
	if len(s) > maxIncarnationLen {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// newIncarnation returns a random incarnation id: 32 lower-case hex digits.
func newIncarnation() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("checkpoint store incarnation: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// IncarnationError is a FileStore whose file no longer holds the
// incarnation this process wrote when it opened the store: the directory
// was replaced or restored under the running process (a backup copied
// back, a volume swapped), or another process opened a replacement
// directory at the same path. The store refuses every further Load and
// Save; it wraps ErrFenced: stop without deciding anything more.
type IncarnationError struct {
	// Dir is the store directory.
	Dir string
	// Opened is the incarnation this FileStore wrote at open.
	Opened string
	// OnDisk is the incarnation the file holds now; empty when it holds
	// none (a copy written before incarnations were recorded).
	OnDisk string
}

// Error names the directory, both incarnations and what to do.
func (e *IncarnationError) Error() string {
	onDisk := e.OnDisk
	if onDisk == "" {
		onDisk = "none"
	}
	return fmt.Sprintf("checkpoint store %s was replaced under this process: opened as incarnation %s, the file now "+
		"holds incarnation %s (the directory was restored from a copy or replaced, or another process opened the "+
		"replacement); refusing to save. Stop every process of the job, keep the newest copy of the store, "+
		"and start one process (docs/operations.md, store replaced)", e.Dir, e.Opened, onDisk)
}

// Unwrap returns ErrFenced.
func (e *IncarnationError) Unwrap() error { return ErrFenced }
