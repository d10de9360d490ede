//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package run

import (
	"fmt"
	"runtime"
)

// lockInstance is not implemented on this platform: refuse rather than
// let two processes join as one member.
func lockInstance(dir, _, _ string) (func(), error) {
	return nil, fmt.Errorf("lock job.data_dir %s: file locking is not supported on %s", dir, runtime.GOOS)
}
