//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package fileload

import (
	"fmt"
	"os"
	"runtime"
)

// lockDir is not implemented on this platform: refuse rather than let two
// processes run one load.
func lockDir(dir string) (*os.File, error) {
	return nil, fmt.Errorf("lock load store %s: file locking is not supported on %s", dir, runtime.GOOS)
}
