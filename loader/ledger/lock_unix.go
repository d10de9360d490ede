//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package ledger

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes a non-blocking exclusive flock on f (released when f is
// closed). Locks are per open file, so a second Open in this process is
// refused too.
func lockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &LockedError{Path: f.Name()}
		}
		return fmt.Errorf("lock ledger %s: %w", f.Name(), err)
	}
	return nil
}
