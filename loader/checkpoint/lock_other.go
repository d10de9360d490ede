//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package checkpoint

import (
	"fmt"
	"os"
	"runtime"
)

// lockDir is not implemented on this platform: refuse rather than run
// without the single-writer guarantee (docs/design.md §3).
func lockDir(dir string) (*os.File, error) {
	return nil, fmt.Errorf("lock checkpoint store %s: file locking is not supported on %s", dir, runtime.GOOS)
}
