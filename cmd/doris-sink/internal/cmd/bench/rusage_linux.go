//go:build linux

package bench

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// usage returns the CPU time (user + system) and ru_maxrss (MiB; Linux
// reports KiB) of an ended child; see peakRSS for why the latter is only a
// fallback.
func usage(ps *os.ProcessState) (cpu time.Duration, maxRSSMB float64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime(), 0
	}
	return ps.UserTime() + ps.SystemTime(), float64(ru.Maxrss) / 1024
}

// selfCPU returns this process's CPU time so far (the broker and the
// emulator run here).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS returns this process's VmHWM in MiB (0 if unknown). The child's
// rusage ru_maxrss is not usable: Linux carries the pre-exec memory's
// high-water mark across exec, and Go starts children with vfork sharing
// the parent's memory, so every child's ru_maxrss starts at the parent's
// peak (the broker's seeded topics). VmHWM is the peak of the memory the
// child mapped after exec.
func peakRSS() float64 { return statusMiB("VmHWM:") }

// statusMiB reads field (e.g. "VmHWM:") of /proc/self/status in MiB (0 if
// unknown).
func statusMiB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte(field)); ok {
			kb, err := strconv.ParseFloat(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}

// parentRSS returns this process's VmRSS and VmHWM in MiB (0 if unknown):
// the parent's memory across a run of many seeded topics.
func parentRSS() (rss, peak float64) {
	return statusMiB("VmRSS:"), statusMiB("VmHWM:")
}
