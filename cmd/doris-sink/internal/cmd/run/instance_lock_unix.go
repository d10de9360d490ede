//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package run

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockInstance takes a non-blocking exclusive flock on path (in dir) and
// writes this process's pid and host in it (informational). Locks are per
// open file: a second claim in the same process is refused too. The kernel
// releases it when the process ends, kill -9 included.
func lockInstance(dir, path, instance string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock job.data_dir %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(path)
			return nil, &DataDirInUseError{Dir: dir, Lock: path, Instance: instance, Holder: strings.TrimSpace(string(b))}
		}
		return nil, fmt.Errorf("lock job.data_dir %s: %w", dir, err)
	}
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+" host "+host+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
