package bench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// pinning is how a run places its processes on CPUs: the child of every
// case on ChildCPUs, the parent (kfake broker, Doris emulator, the limit
// line's discarding sink) on ParentCPUs, so that the two do not take
// turns on one core. Applied is false with Reason when the machine does
// not allow it (fewer than 2 CPUs allowed, sched_setaffinity refused, not
// Linux, or --no-pin).
type pinning struct {
	Applied    bool
	ChildCPUs  []int
	ParentCPUs []int
	Reason     string
	// Allowed are the CPUs the parent had before pinning: it spreads over
	// them again while it seeds a topic (no child runs then).
	Allowed []int
}

// unpinned runs f with the parent on every CPU it was allowed (seeding
// and warming a topic, when no child is measured), then pins it back.
func (p pinning) unpinned(f func() error) error {
	if !p.Applied {
		return f()
	}
	if err := pinProcess(p.Allowed); err != nil {
		return err
	}
	ferr := f()
	if err := pinProcess(p.ParentCPUs); err != nil {
		return errors.Join(ferr, err)
	}
	return ferr
}

// planPinning splits the CPUs this process may run on: the child gets the
// last one, the parent the others (with 2 CPUs: the parent on the first,
// the child on the second). With fewer than 2 there is nothing to split.
func planPinning(allowed []int) pinning {
	if len(allowed) < 2 {
		return pinning{Reason: fmt.Sprintf("not applied: %d CPU(s) allowed, need 2 to separate the child from the parent", len(allowed))}
	}
	n := len(allowed)
	return pinning{Applied: true, ParentCPUs: append([]int(nil), allowed[:n-1]...), ChildCPUs: []int{allowed[n-1]}}
}

// String is the report's header line.
func (p pinning) String() string {
	if !p.Applied {
		return "pinning " + p.Reason
	}
	return fmt.Sprintf("pinning applied: each case's child on CPU %s, the parent (kfake, emulator) on CPU %s", cpuList(p.ChildCPUs), cpuList(p.ParentCPUs))
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
