package bench

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// With 2 or more allowed CPUs the child gets the last and the parent the
// rest; with one there is nothing to split, and the report says why.
func TestPlanPinning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		allowed       []int
		parent, child []int
		line          string
	}{
		{allowed: []int{0, 1}, parent: []int{0}, child: []int{1},
			line: "pinning applied: each case's child on CPU 1, the parent (kfake, emulator) on CPU 0"},
		{allowed: []int{2, 5, 7, 9}, parent: []int{2, 5, 7}, child: []int{9},
			line: "pinning applied: each case's child on CPU 9, the parent (kfake, emulator) on CPU 2,5,7"},
		{allowed: []int{3}, line: "pinning not applied: 1 CPU(s) allowed, need 2 to separate the child from the parent"},
		{allowed: nil, line: "pinning not applied: 0 CPU(s) allowed, need 2 to separate the child from the parent"},
	} {
		p := planPinning(tc.allowed)
		if p.Applied != (tc.child != nil) || !slices.Equal(p.ParentCPUs, tc.parent) || !slices.Equal(p.ChildCPUs, tc.child) {
			t.Errorf("planPinning(%v) = %+v, want parent %v child %v", tc.allowed, p, tc.parent, tc.child)
		}
		if p.String() != tc.line {
			t.Errorf("planPinning(%v): line %q, want %q", tc.allowed, p, tc.line)
		}
	}
}

// A worker given PinCPUs binds all its threads to them (pinProcess, the
// parent's call too) and reports the affinity it then has. The child is a
// baseline of an empty topic: it reads nothing and needs no broker.
func TestWorkerPinsItself(t *testing.T) {
	t.Parallel()
	allowed, err := allowedCPUs()
	if err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	cpu := allowed[len(allowed)-1]
	o := &Options{Worker: testWorker}
	m, err := o.runChild(context.Background(), spec{Kind: kindBaseline, Brokers: []string{"127.0.0.1:1"}, Topic: "none",
		End: map[int32]int64{}, PinCPUs: []int{cpu}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.res.PinnedCPUs, []int{cpu}) {
		t.Fatalf("worker affinity %v after pinning to %d", m.res.PinnedCPUs, cpu)
	}
	// --no-pin: no affinity is set, the report says so.
	o = &Options{NoPin: true, IO: nil}
	e := &env{}
	o.pin(e)()
	if e.pin.Applied || !strings.Contains(e.pin.String(), "--no-pin") {
		t.Fatalf("--no-pin: %v", e.pin)
	}
}
