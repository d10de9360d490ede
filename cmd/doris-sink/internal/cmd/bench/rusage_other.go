//go:build !linux

package bench

import (
	"errors"
	"os"
	"time"
)

// usage returns the CPU time of an ended child; peak RSS is only read on
// Linux (0 here).
func usage(ps *os.ProcessState) (cpu time.Duration, maxRSSMB float64) {
	return ps.UserTime() + ps.SystemTime(), 0
}

// selfCPU is only measured on Linux.
func selfCPU() time.Duration { return 0 }

// peakRSS is only measured on Linux.
func peakRSS() float64 { return 0 }

// parentRSS is only measured on Linux.
func parentRSS() (rss, peak float64) { return 0, 0 }

// procCPU is only measured on Linux.
func procCPU(int) (time.Duration, error) {
	return 0, errors.New("the CPU time of another process is only read on Linux")
}
