//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package fileload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes a non-blocking exclusive flock on dir/LOCK and records this
// process's PID in it. Closing the file (or the process dying) releases it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open load store lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := 0
			if b, rerr := os.ReadFile(path); rerr == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, &LockedError{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("lock load store %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
