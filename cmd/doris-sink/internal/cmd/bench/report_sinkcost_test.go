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
		"sink ≥ 0.9× baseline on every case (issue 15): holds (lowest 0.91×, b/at-least-once)",
		"sink CPU s/GB ≤ 1.3× baseline on every case (issue 15): holds (highest 1.25×, b/at-least-once)",
	}
	if got := sinkCostVerdicts(rs); !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts\n got %q\nwant %q", got, want)
	}
	rs = append(rs, &Result{Kind: KindThroughput, Case: "c/exactly-once", Mode: "exactly-once", RatioToBaseline: f(0.7), CPURatioToBaseline: 1.6})
	want = []string{
		"sink ≥ 0.9× baseline on every case (issue 15): MISSED (lowest 0.70×, c/exactly-once)",
		"sink CPU s/GB ≤ 1.3× baseline on every case (issue 15): MISSED (highest 1.60×, c/exactly-once)",
	}
	if got := sinkCostVerdicts(rs); !reflect.DeepEqual(got, want) {
		t.Fatalf("verdicts\n got %q\nwant %q", got, want)
	}
	if got := sinkCostVerdicts(rs[:1]); got != nil {
		t.Fatalf("baseline only: %q, want none", got)
	}
}
