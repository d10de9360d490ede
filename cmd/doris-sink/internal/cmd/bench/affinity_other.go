//go:build !linux

package bench

import "errors"

var errNoAffinity = errors.New("CPU affinity is only set on Linux")

// allowedCPUs is only known on Linux.
func allowedCPUs() ([]int, error) { return nil, errNoAffinity }

// pinProcess is only done on Linux.
func pinProcess([]int) error { return errNoAffinity }
