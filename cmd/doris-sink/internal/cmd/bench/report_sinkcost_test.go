package bench

import (
	"reflect"
	"testing"
)

// TestSinkCostVerdicts: issue 15's targets are judged on the worst
// uncompressed sink case, ignoring baselines, --compress cases and the
// parallel family.
func TestSinkCostVerdicts(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	rs := []*Result{
		{Kind: KindThroughput, Case: "a/baseline", Mode: "baseline", RatioToBaseline: f(1), CPURatioToBaseline: 1},
		{Kind: KindThroughput, Case: "a/exactly-once", Mode: "exactly-once", RatioToBaseline: f(0.95), CPURatioToBaseline: 1.2},
		{Kind: KindThroughput, Case: "b/at-least-once", Mode: "at-least-once", RatioToBaseline: f(0.91), CPURatioToBaseline: 1.25},
		{Kind: KindThroughput, Case: "a/exactly-once+gz", Mode: "exactly-once+gz", RatioToBaseline: f(0.2), CPURatioToBaseline: 4},
		{Kind: KindThroughput, Case: "parallel/K=1", Mode: "exactly-once", Backends: 4, RatioToBaseline: f(0.05), CPURatioToBaseline: 2},
		{Kind: KindLatency, Case: "latency", Mode: "exactly-once"},
	}
	want := []string{
		"sink ≥ 0.9× baseline records/s at steady state on every case: holds (lowest 0.91×, b/at-least-once)",
		"sink CPU s/GB ≤ 1.3× baseline at steady state on every case: holds (highest 1.25×, b/at-least-once)",
		"cases meeting both: 2 of 2",
	}
	if got := sinkCostVerdicts(rs); !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts\n got %q\nwant %q", got, want)
	}
	rs = append(rs, &Result{Kind: KindThroughput, Case: "c/exactly-once", Mode: "exactly-once", RatioToBaseline: f(0.7), CPURatioToBaseline: 1.6})
	want = []string{
		"sink ≥ 0.9× baseline records/s at steady state on every case: MISSED (lowest 0.70×, c/exactly-once)",
		"sink CPU s/GB ≤ 1.3× baseline at steady state on every case: MISSED (highest 1.60×, c/exactly-once)",
		"cases meeting both: 2 of 3",
	}
	if got := sinkCostVerdicts(rs); !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts\n got %q\nwant %q", got, want)
	}
	if got := sinkCostVerdicts(rs[:1]); got != nil {
		t.Fatalf("baseline only: %q, want none", got)
	}
}

// TestCPUMedianOfRounds: the CPU target is judged on the median of the
// rounds' CPU s/GB, picked on its own, not on the CPU of the round whose
// records/s is the median.
func TestCPUMedianOfRounds(t *testing.T) {
	round := func(rps, cpu float64) *Result { return &Result{RecordsPerS: rps, CPUSecondsPerGB: cpu} }
	base := median([]*Result{round(100, 2.0), round(120, 1.0), round(90, 3.0)})
	base.setRange([]*Result{round(100, 2.0), round(120, 1.0), round(90, 3.0)})
	sinkRounds := []*Result{round(80, 2.2), round(95, 4.0), round(70, 2.4)}
	sink := median(sinkRounds) // the 80 rec/s round, CPU 2.2
	sink.setRange(sinkRounds)
	sink.setRatios(base) // base's median round: 100 rec/s, CPU 2.0
	if sink.CPUSecondsPerGBMedian != 2.4 || base.CPUSecondsPerGBMedian != 2.0 {
		t.Fatalf("CPU medians sink %v base %v, want 2.4 and 2.0", sink.CPUSecondsPerGBMedian, base.CPUSecondsPerGBMedian)
	}
	if got := sink.CPUMedianRatioToBaseline; got < 1.199 || got > 1.201 {
		t.Fatalf("CPU median ratio %v, want 1.2", got)
	}
	if got := sink.CPURatioToBaseline; got < 1.099 || got > 1.101 {
		t.Fatalf("median round's CPU ratio %v, want 1.1", got)
	}
	sink.Kind, sink.Mode, sink.Case = KindThroughput, "exactly-once", "x/exactly-once"
	if got := sinkCostVerdicts([]*Result{sink})[1]; got != "sink CPU s/GB ≤ 1.3× baseline at steady state on every case: holds (highest 1.20×, x/exactly-once)" {
		t.Fatalf("verdict %q", got)
	}
}
