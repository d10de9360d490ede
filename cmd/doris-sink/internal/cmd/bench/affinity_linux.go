//go:build linux

package bench

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// allowedCPUs returns the CPUs this process may run on (its calling
// thread's affinity mask, which every thread inherits unless set apart).
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var out []int
	for c := 0; c < len(set)*64 && len(out) < set.Count(); c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// pinProcess binds every thread of this process to cpus.
// sched_setaffinity binds one thread; threads created later inherit their
// creator's mask, so the threads of /proc/self/task are bound twice over
// (the second pass catches one started during the first).
func pinProcess(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("pin to CPU %s: %w", cpuList(cpus), err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin thread %d to CPU %s: sched_setaffinity: %w", tid, cpuList(cpus), err)
			}
		}
	}
	return nil
}
