package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// stableKeys are the `-o json` fields of a throughput case that every
// consumer of bench's output may rely on: those before issue 27 and those
// it added (always present on a case with a steady-state window; the
// optional ones are checked by mode below).
var stableKeys = []string{
	"case", "kind", "mode", "format", "record_bytes", "partitions", "records", "seconds", "records_per_s", "mb_per_s",
	"cpu_seconds", "cpu_s_per_gb", "parent_cpu_seconds", "peak_rss_mb", "allocs_per_record", "alloc_bytes_per_record",
	"ratio_to_baseline", "rounds", "mb_per_s_min", "mb_per_s_max", "cpu_s_per_gb_min", "cpu_s_per_gb_max", "cpu_s_per_gb_median",
	"measured_over", "window_records", "window_bytes", "window_seconds", "window_cpu_seconds",
	"run_records_per_s", "run_mb_per_s", "run_cpu_s_per_gb", "exec_to_first_record_ms", "commit_tail_ms", "pinned", "parent_rss_mb",
}

// TestBenchSteadyState runs two combos big enough for a window (4 MiB of
// 1 KiB rows on one partition, fetches of at most 1 MiB: several polls) through the
// baseline, the limit line and the exactly-once sink, JSON and JSON Schema
// (whose rows the parent checks the emulator counted: they decoded through
// the sink's registry path). Every case is measured over its window, its
// rates are the window's spans, the sink has its fixed costs and its
// ratios to the limit line. No timing is asserted.
func TestBenchSteadyState(t *testing.T) {
	t.Parallel()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdBench(f, func(ctx context.Context, o *Options) error {
		o.Plan = &Plan{Combos: sized([]Combo{{Format: "json", RecordBytes: 1024, Partitions: 1}, {Format: "json_schema", RecordBytes: 1024, Partitions: 1}}, 4<<20),
			Modes: []string{"limit", "exactly-once"}, Interval: 200 * time.Millisecond, Repeat: 1, FetchMaxBytes: 1 << 20}
		o.Worker, o.NoPin = testWorker, true
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"-o", "json"})
	cmd.SetOut(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errOut)
	}
	var cases []string
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("output: %v\n%s", err, out)
		}
		name := m["case"].(string)
		cases = append(cases, name)
		for _, k := range stableKeys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no field %q", name, k)
			}
		}
		if m["measured_over"] != "window" {
			t.Errorf("%s: measured over %v, want the window", name, m["measured_over"])
			continue
		}
		num := func(k string) float64 { v, _ := m[k].(float64); return v }
		wb, wr, ws, wc := num("window_bytes"), num("window_records"), num("window_seconds"), num("window_cpu_seconds")
		if wb <= 0 || wb > 4<<20 || wr <= 0 || wr > num("records") || ws <= 0 {
			t.Errorf("%s: window %v bytes %v records %v s: want inside the case's 4 MiB", name, wb, wr, ws)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
		if !near(num("records_per_s"), wr/ws) || !near(num("mb_per_s"), wb/1e6/ws) || !near(num("cpu_s_per_gb"), wc/(wb/1e9)) {
			t.Errorf("%s: rates %v rec/s %v MB/s %v cpu-s/GB are not the window's (%v records, %v bytes, %v s, %v cpu-s)",
				name, m["records_per_s"], m["mb_per_s"], m["cpu_s_per_gb"], wr, wb, ws, wc)
		}
		if num("exec_to_first_record_ms") <= 0 || num("commit_tail_ms") < 0 {
			t.Errorf("%s: exec→first record %v ms, tail %v ms", name, m["exec_to_first_record_ms"], m["commit_tail_ms"])
		}
		switch m["mode"] {
		case "exactly-once":
			for _, k := range []string{"exec_to_first_begin_ms", "recover_call_ms", "ratio_to_limit", "cpu_ratio_to_limit"} {
				if num(k) <= 0 {
					t.Errorf("%s: %s %v, want measured", name, k, m[k])
				}
			}
			if m["target"] != "pass" && m["target"] != "miss" {
				t.Errorf("%s: target %v, want pass or miss", name, m["target"])
			}
		case "limit":
			if m["target"] != nil {
				t.Errorf("%s: the limit line has a target verdict %v", name, m["target"])
			}
		}
	}
	want := []string{"json-1KiB-p1/baseline", "json-1KiB-p1/limit", "json-1KiB-p1/exactly-once",
		"json_schema-1KiB-p1/baseline", "json_schema-1KiB-p1/limit", "json_schema-1KiB-p1/exactly-once"}
	if len(cases) != len(want) {
		t.Fatalf("cases %v, want %v", cases, want)
	}
	for i := range want {
		if cases[i] != want[i] {
			t.Fatalf("cases %v, want %v", cases, want)
		}
	}
}
