//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package ledger

import (
	"fmt"
	"os"
	"runtime"
)

// lockFile is not implemented on this platform: refuse rather than allow
// two writers.
func lockFile(f *os.File) error {
	return fmt.Errorf("lock ledger %s: file locking is not supported on %s", f.Name(), runtime.GOOS)
}
