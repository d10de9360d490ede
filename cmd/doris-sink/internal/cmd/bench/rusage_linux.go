//go:build linux

package bench

import (
	"bytes"
	"fmt"
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

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procCPU returns the CPU time (user + system) process pid has used so far,
// from /proc/<pid>/stat (fields 14 and 15), at 10 ms resolution.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cpu time of process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu time of process %d: no ')' in /proc/%d/stat", pid, pid)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu time of process %d: /proc/%d/stat has %d fields", pid, pid, len(f)+2)
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu time of process %d: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}
