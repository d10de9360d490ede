package kafka

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// Review P6: rootCause cut the error chain to its first 400 bytes, and the
// innermost error (the I/O error the operator has to fix) was lost. The cut
// now keeps the head and the innermost error.
func TestRootCauseKeepsInnermost(t *testing.T) {
	t.Parallel()
	io := &fs.PathError{Op: "fsync", Path: "/var/lib/doris-sink/orders/checkpoint.json", Err: syscall.EIO}
	err := fmt.Errorf("recover: load checkpoint state from /var/lib/doris-sink/orders (%s): %w (%w): %w",
		strings.Repeat("é context ", 60), checkpoint.ErrResyncFailed, checkpoint.ErrUnsynced, io)
	got := rootCause(err)
	if !strings.HasPrefix(got, "recover: load checkpoint state") {
		t.Errorf("rootCause %q lost the head", got)
	}
	if !strings.HasSuffix(got, io.Error()) {
		t.Errorf("rootCause %q lost the innermost error %q", got, io.Error())
	}
	if len(got) > rootCauseMax+len(" … ") || !utf8.ValidString(got) || strings.Contains(got, "\n") {
		t.Errorf("rootCause %q: %d bytes, want one valid line of at most ~%d", got, len(got), rootCauseMax)
	}
	// A join's innermost error is its last one's.
	joined := errors.Join(errors.New(strings.Repeat("a", 500)), fmt.Errorf("b: %w", io))
	if got := rootCause(joined); !strings.HasSuffix(got, "b: "+io.Error()) {
		t.Errorf("rootCause of a join = %q, want it to end with its last error", got)
	}
	if short := rootCause(errors.New("short")); short != "short" {
		t.Errorf("rootCause of a short error = %q", short)
	}
}
