package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// TestMain lets this test binary act as a bench worker (re-executed by
// the command under test with WorkerEnv=1).
func TestMain(m *testing.M) {
	runMemberIfAsked()
	if os.Getenv(WorkerEnv) == "1" {
		if err := RunWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testWorker() (string, []string, []string, error) {
	exe, err := os.Executable()
	return exe, []string{"-test.run=^$"}, []string{WorkerEnv + "=1"}, err
}

// tinyPlan runs every kind of case on a few records.
func tinyPlan() *Plan {
	return &Plan{
		Combos: []Combo{
			{Format: "json", RecordBytes: 100, Partitions: 1, Records: 1500},
			{Format: "csv", RecordBytes: 100, Partitions: 3, Records: 1500},
		},
		Modes: bothModes, Interval: 200 * time.Millisecond, Repeat: 1,
		Latency:  []LatencyCase{{Mode: "exactly-once", Interval: 200 * time.Millisecond, Duration: 300 * time.Millisecond, Rate: 1000}},
		Recovery: true, RecoveryRecords: 2000,
		Memory: []int64{1 << 20, 2 << 20},
	}
}

// TestBenchJSONShape runs the tiny plan end to end with real child
// processes and checks the JSON objects and the ratios; it asserts no
// timing.
func TestBenchJSONShape(t *testing.T) {
	t.Parallel()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdBench(f, func(ctx context.Context, o *Options) error {
		o.Plan, o.Worker = tinyPlan(), testWorker
		o.NoPin = true // pinning the test binary would slow every parallel test
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"-o", "json"})
	cmd.SetOut(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errOut)
	}
	var rs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("output is not a stream of JSON objects: %v\n%s", err, out)
		}
		rs = append(rs, m)
	}
	// 2 combos × (baseline + 2 modes) + 1 latency + 1 recovery + 2 memory.
	if len(rs) != 10 {
		t.Fatalf("got %d objects, want 10:\n%s", len(rs), out)
	}
	kinds := map[string]int{}
	var base map[string]any
	for _, r := range rs {
		for _, k := range []string{"case", "kind", "mode", "records_per_s", "mb_per_s", "ratio_to_baseline", "peak_rss_mb", "cpu_s_per_gb", "allocs_per_record"} {
			if _, ok := r[k]; !ok {
				t.Errorf("case %v: no field %q", r["case"], k)
			}
		}
		kinds[r["kind"].(string)]++
		if r["kind"] != KindThroughput {
			continue
		}
		if r["records"].(float64) != 1500 {
			t.Errorf("case %v: records %v, want 1500", r["case"], r["records"])
		}
		if r["peak_rss_mb"].(float64) <= 0 || r["records_per_s"].(float64) <= 0 {
			t.Errorf("case %v: peak_rss_mb %v, records_per_s %v: want positive", r["case"], r["peak_rss_mb"], r["records_per_s"])
		}
		if r["mode"] == "baseline" {
			base = r
			if r["ratio_to_baseline"] != 1.0 {
				t.Errorf("baseline %v: ratio_to_baseline %v, want 1", r["case"], r["ratio_to_baseline"])
			}
			continue
		}
		want := r["records_per_s"].(float64) / base["records_per_s"].(float64)
		if got, ok := r["ratio_to_baseline"].(float64); !ok || got != want {
			t.Errorf("case %v: ratio_to_baseline %v, want records_per_s/baseline's = %v", r["case"], r["ratio_to_baseline"], want)
		}
		if r["mode"] == "exactly-once" {
			if v, _ := r["ratio_to_at_least_once"].(float64); v <= 0 {
				t.Errorf("case %v: ratio_to_at_least_once %v, want computed", r["case"], r["ratio_to_at_least_once"])
			}
		}
	}
	want := map[string]int{KindThroughput: 6, KindLatency: 1, KindRecovery: 1, KindMemory: 2}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s cases, want %d", kinds[k], k, n)
		}
	}
	for _, r := range rs {
		switch r["kind"] {
		case KindLatency:
			if r["latency_p99_ms"] == nil || r["latency_p50_ms"] == nil {
				t.Errorf("latency case without percentiles: %v", r)
			}
		case KindRecovery:
			if v, _ := r["labels_checked"].(float64); v < 1 {
				t.Errorf("recovery checked %v labels, want at least the one left open by kill -9", r["labels_checked"])
			}
		case KindMemory:
			if r["ratio_to_baseline"] != nil {
				t.Errorf("memory case has a baseline ratio: %v", r["ratio_to_baseline"])
			}
		}
	}
}

// TestBenchFlags checks parsing without running anything.
func TestBenchFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		quick   bool
		memory  bool
		output  string
		wantErr bool
	}{
		{args: nil, output: "table"},
		{args: []string{"--quick", "-o", "json"}, quick: true, output: "json"},
		{args: []string{"--memory"}, memory: true, output: "table"},
		{args: []string{"--repeat", "0"}, wantErr: true},
		{args: []string{"-o", "yaml"}, wantErr: true},
		{args: []string{"--compress", "zstd"}, wantErr: true},
		{args: []string{"--compress", "gz,lz4"}, output: "table"},
		{args: []string{"--parallel", "--repeat", "3"}, output: "table"},
		{args: []string{"--parallel", "--memory"}, wantErr: true},
		{args: []string{"--parallel", "--compress", "gz"}, wantErr: true},
		{args: []string{"--bytes", "512MiB", "--no-pin"}, output: "table"},
		{args: []string{"--bytes", "12"}, wantErr: true},
		{args: []string{"--bytes", "lots"}, wantErr: true},
	} {
		f, _, _ := cmdutil.NewTestFactory(false)
		var got *Options
		cmd := NewCmdBench(f, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if tc.wantErr {
			if err == nil {
				t.Errorf("%v: no error", tc.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got.Quick != tc.quick || got.Memory != tc.memory || got.Output != tc.output {
			t.Errorf("%v: quick %v memory %v output %q", tc.args, got.Quick, got.Memory, got.Output)
		}
	}
}

// TestPlans: the quick plan is a subset in size of the full one, and the
// memory plan has the sizes of docs/design.md §8.
func TestPlans(t *testing.T) {
	t.Parallel()
	full := FullPlan()
	if n := len(full.Combos); n != 14 {
		t.Errorf("full matrix has %d combos, want 14 (2 sizes × 2 formats × 2 partition counts, avro, protobuf and json_schema 1 KiB × 2 partition counts)", n)
	}
	for _, c := range append(full.Combos, QuickPlan().Combos...) {
		if b := c.Records * int64(c.RecordBytes); b > DefaultCaseBytes || b <= DefaultCaseBytes-int64(c.RecordBytes) {
			t.Errorf("combo %s: %d records of %d B, want %d bytes", c.Name(), c.Records, c.RecordBytes, DefaultCaseBytes)
		}
	}
	if q := QuickPlan(); len(q.Combos) > 2 || len(q.Latency) > 0 {
		t.Errorf("quick plan: %d combos, %d latency cases; want one or two full-size combos", len(q.Combos), len(q.Latency))
	}
	if !slices.Contains(full.Modes, "limit") || len(full.Group) != 1 || full.Group[0].Members != 2 {
		t.Errorf("full plan modes %v, group %v: want the limit line and group mode with 2 members", full.Modes, full.Group)
	}
	var extra []string
	for _, c := range full.Combos {
		extra = append(extra, c.Extra...)
	}
	if !slices.Equal(extra, costModes) {
		t.Errorf("full plan's extra modes %v, want %v once", extra, costModes)
	}
	if got := MemoryPlan(false).Memory; len(got) != 3 || got[0] != 64<<20 || got[2] != 4<<30 {
		t.Errorf("memory plan %v", got)
	}
	if Combo.Name(Combo{Format: "json", RecordBytes: 1024, Partitions: 8}) != "json-1KiB-p8" {
		t.Errorf("combo name")
	}
}

// TestBenchCompress runs one combo with --compress lz4: the extra
// exactly-once+lz4 case loads every record (the parent checks that the
// emulator, which decodes the body as the BE does, counted all of them)
// and has its ratio to the same combo's baseline.
func TestBenchCompress(t *testing.T) {
	t.Parallel()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdBench(f, func(ctx context.Context, o *Options) error {
		o.Plan = &Plan{Combos: []Combo{{Format: "json", RecordBytes: 100, Partitions: 1, Records: 1500}},
			Modes: []string{"exactly-once"}, Interval: 200 * time.Millisecond, Repeat: 1}
		o.Worker = testWorker
		o.NoPin = true // pinning the test binary would slow every parallel test
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"-o", "json", "--compress", "lz4"})
	cmd.SetOut(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errOut)
	}
	var modes []string
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("output: %v\n%s", err, out)
		}
		modes = append(modes, m["mode"].(string))
		if m["mode"] == "exactly-once+lz4" {
			if m["records"].(float64) != 1500 || m["ratio_to_baseline"] == nil {
				t.Errorf("compressed case %v", m)
			}
		}
	}
	if len(modes) != 3 || modes[2] != "exactly-once+lz4" {
		t.Fatalf("modes %v, want baseline, exactly-once, exactly-once+lz4", modes)
	}
	// Bytes on the wire: the compressed case sent fewer body bytes than
	// the uncompressed one, which sent about the record values.
	wire := map[string]float64{}
	dec = json.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			break
		}
		if v, ok := m["wire_bytes"].(float64); ok {
			wire[m["mode"].(string)] = v
		}
	}
	if wire["exactly-once"] <= 0 || wire["exactly-once+lz4"] <= 0 || wire["exactly-once+lz4"] >= wire["exactly-once"] {
		t.Fatalf("wire bytes %v: want both counted, lz4 below uncompressed", wire)
	}
}

// TestBenchParallel runs a tiny parallel family (--parallel's shape): the
// baseline and the sink at K = 1, 2 and auto into an emulator of 4 BEs
// with a per-load ceiling, and a K = 2 latency case on it; every case
// loads every record (checked by the parent against the counting
// emulator) and reports its K, the ratio to K = 1 and the wire bytes.
// No timing is asserted.
func TestBenchParallel(t *testing.T) {
	t.Parallel()
	f, out, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdBench(f, func(ctx context.Context, o *Options) error {
		o.Plan = &Plan{Interval: 200 * time.Millisecond, Repeat: 2, Parallel: &ParallelPlan{
			Combo:    Combo{Format: "json", RecordBytes: 100, Partitions: 4, Records: 2000},
			Backends: 4, BytesPerSec: 64 << 20, Ks: []string{"1", "2", "auto"},
			Latency: []LatencyCase{{Mode: "exactly-once", Interval: 200 * time.Millisecond, Duration: 300 * time.Millisecond,
				Rate: 1000, Partitions: 4, SubLoads: 2, Parallel: true}},
		}}
		o.Worker = testWorker
		o.NoPin = true // pinning the test binary would slow every parallel test
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"-o", "json"})
	cmd.SetOut(io.Discard)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("bench: %v\nstderr: %s", err, errOut)
	}
	var got []string
	dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("output: %v\n%s", err, out)
		}
		got = append(got, m["case"].(string))
		if m["kind"] == KindLatency {
			if m["sub_loads"] != "2" || m["latency_p99_ms"] == nil {
				t.Errorf("latency case %v: want sub_loads 2 and a p99", m)
			}
			continue
		}
		if m["backends"] != 4.0 || m["rounds"] != 2.0 || m["records"] != 2000.0 {
			t.Errorf("case %v: backends %v rounds %v records %v, want 4, 2, 2000", m["case"], m["backends"], m["rounds"], m["records"])
		}
		if m["mode"] == "baseline" {
			continue
		}
		if w, _ := m["wire_bytes"].(float64); w <= 0 {
			t.Errorf("case %v: wire_bytes %v", m["case"], m["wire_bytes"])
		}
		if m["sub_loads"] == "1" && m["ratio_to_k1"] != 1.0 {
			t.Errorf("K = 1 case %v: ratio_to_k1 %v, want 1", m["case"], m["ratio_to_k1"])
		}
		if k, _ := m["sub_loads_end"].(float64); k < 1 {
			t.Errorf("case %v: sub_loads_end %v", m["case"], m["sub_loads_end"])
		}
	}
	want := []string{"parallel-json-100B-p4/baseline", "parallel-json-100B-p4/exactly-once-k1", "parallel-json-100B-p4/exactly-once-k2",
		"parallel-json-100B-p4/exactly-once-kauto", "latency-200ms-exactly-once-k2"}
	if !slices.Equal(got, want) {
		t.Fatalf("cases %v, want %v", got, want)
	}
}

// A recovery victim that is not ready to kill within the bound is an error
// naming the bound, not a wait for ever (a victim whose writes bypassed its
// hook once hung the suite for 10 minutes). The bound here is one
// nanosecond: the victim cannot start in time.
func TestBenchVictimNotReadyIsAnError(t *testing.T) {
	t.Parallel()
	f, _, errOut := cmdutil.NewTestFactory(false)
	cmd := NewCmdBench(f, func(ctx context.Context, o *Options) error {
		o.Plan, o.Worker = &Plan{Recovery: true, RecoveryRecords: 50, Repeat: 1}, testWorker
		o.VictimReadyWithin = time.Nanosecond
		o.NoPin = true // pinning the test binary would slow every parallel test
		return Run(ctx, o)
	})
	cmd.SetArgs([]string{"-o", "json"})
	cmd.SetOut(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not ready within 1ns") {
		t.Fatalf("bench: %v, want the victim's readiness bound named\nstderr: %s", err, errOut)
	}
}

// parseBytes reads binary and decimal units.
func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"2GiB": 2 << 30, "512MiB": 512 << 20, "64KiB": 64 << 10, "1GB": 1e9, "3MB": 3e6, "4096": 4096, "10B": 10} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1MiB", "1.5GiB", "2TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
	}
}
