package bench

import (
	"fmt"
	"time"
)

// Combo is one seeded topic of the throughput matrix: the baseline and
// every sink mode read the same topic.
type Combo struct {
	// Format is "json", "csv", "avro" or "protobuf". An avro combo carries the same
	// logical data as the json combo of its RecordBytes (the JSON row's
	// size; its Avro values are smaller) for the avro/json ratios.
	Format      string
	RecordBytes int
	Partitions  int
	Records     int64
}

// Name is e.g. "json-1KiB-p8".
func (c Combo) Name() string {
	size := fmt.Sprintf("%dB", c.RecordBytes)
	if c.RecordBytes%1024 == 0 {
		size = fmt.Sprintf("%dKiB", c.RecordBytes/1024)
	}
	return fmt.Sprintf("%s-%s-p%d", c.Format, size, c.Partitions)
}

// LatencyCase measures visibility latency at one checkpoint interval
// while the worker produces Rate records/s for Duration.
type LatencyCase struct {
	Mode     string
	Interval time.Duration
	Duration time.Duration
	Rate     int
	// Partitions of the fresh topic (0: 1); SubLoads is the sink's K (0:
	// 1). Parallel runs it on the parallel family's emulator (several BEs,
	// per-load ceiling) with doris.be_spread backends.
	Partitions int
	SubLoads   int
	Parallel   bool
}

// ParallelPlan is the parallel-load family: the sink (exactly-once,
// doris.be_spread backends) loads Combo into an emulator of Backends BEs
// whose Stream Loads each ingest at most BytesPerSec (doristest
// WithBackends, WithLoadThroughput), once per K of Ks ("auto":
// doris.sub_loads: auto), beside the bare consumer on the same topic.
type ParallelPlan struct {
	Combo       Combo
	Backends    int
	BytesPerSec int64
	Ks          []string
	// Latency cases run on the same emulator (K > 1: p99 visibility).
	Latency []LatencyCase
}

// Plan is what one bench run measures.
type Plan struct {
	// Combos are the throughput topics; each runs the baseline, then the
	// sink in every mode of Modes at checkpoint interval Interval.
	Combos   []Combo
	Modes    []string
	Interval time.Duration
	// Repeat runs every throughput case this many times (rounds of
	// baseline, modes) and keeps the median by records/s.
	Repeat int
	// Latency cases run on fresh 1-partition topics of 1 KiB JSON.
	Latency []LatencyCase
	// Recovery runs one kill -9 and restart (exactly-once) on a topic of
	// RecoveryRecords 1 KiB JSON records (default 65536).
	Recovery        bool
	RecoveryRecords int64
	// Memory are checkpoint sizes in bytes for the memory cases.
	Memory []int64
	// Parallel, when set, is the parallel-load family (--parallel).
	Parallel *ParallelPlan
	// Group are the group-mode cases (--group).
	Group []GroupCase
}

// ParallelKs are the K of the parallel family: 1 to 32 (16 and 32 find
// where the sink's CPU, not the loads, becomes the bound) and auto.
var ParallelKs = []string{"1", "2", "4", "8", "16", "32", "auto"}

// DefaultParallelPlan is --parallel: 256 MiB of 1 KiB JSON over 32
// partitions (so every K up to 32 touches K sub-loads; quick: 16 MiB)
// into 4 BEs of 16 MiB/s per load, the K of ParallelKs, and visibility
// latency with K = 4 at a 1 s interval. auto starts at K = 1 and doubles
// at most once per 1 s checkpoint: its figure includes that ramp.
func DefaultParallelPlan(quick bool) Plan {
	mb, dur := int64(256), 12*time.Second
	if quick {
		mb, dur = 16, 5*time.Second
	}
	return Plan{Modes: []string{"exactly-once"}, Interval: time.Second, Repeat: 1, Parallel: &ParallelPlan{
		Combo:    Combo{Format: "json", RecordBytes: 1024, Partitions: 32, Records: mb << 20 / 1024},
		Backends: 4, BytesPerSec: 16 << 20, Ks: ParallelKs,
		Latency: []LatencyCase{{Mode: "exactly-once", Interval: time.Second, Duration: dur, Rate: 5000,
			Partitions: 8, SubLoads: 4, Parallel: true}},
	}}
}

var bothModes = []string{"exactly-once", "at-least-once"}

func matrix(mb int64) []Combo {
	var out []Combo
	for _, size := range []int{100, 1024} {
		for _, f := range []string{"json", "csv"} {
			for _, p := range []int{1, 8} {
				out = append(out, Combo{Format: f, RecordBytes: size, Partitions: p, Records: mb << 20 / int64(size)})
			}
		}
	}
	// Avro beside JSON 1 KiB: as many records as json-1KiB.
	for _, p := range []int{1, 8} {
		out = append(out, Combo{Format: "avro", RecordBytes: 1024, Partitions: p, Records: mb << 20 / 1024})
	}
	// Protobuf beside them, on the same data.
	for _, p := range []int{1, 8} {
		out = append(out, Combo{Format: "protobuf", RecordBytes: 1024, Partitions: p, Records: mb << 20 / 1024})
	}
	return out
}

// FullPlan is the full matrix: 100 B and 1 KiB, JSON and CSV, 1 and 8
// partitions (128 MiB each), Avro with the data of JSON 1 KiB, latency at
// 1 s and 10 s, recovery.
func FullPlan() Plan {
	return Plan{
		Combos: matrix(128), Modes: bothModes, Interval: time.Second, Repeat: 1,
		Latency: []LatencyCase{
			{Mode: "exactly-once", Interval: time.Second, Duration: 12 * time.Second, Rate: 5000},
			{Mode: "at-least-once", Interval: time.Second, Duration: 12 * time.Second, Rate: 5000},
			{Mode: "exactly-once", Interval: 10 * time.Second, Duration: 45 * time.Second, Rate: 5000},
			{Mode: "at-least-once", Interval: 10 * time.Second, Duration: 45 * time.Second, Rate: 5000},
		},
		Recovery: true,
	}
}

// QuickPlan is the reduced matrix of --quick (under a minute).
func QuickPlan() Plan {
	return Plan{
		Combos: []Combo{
			{Format: "json", RecordBytes: 1024, Partitions: 1, Records: 128 << 10},
			{Format: "avro", RecordBytes: 1024, Partitions: 1, Records: 128 << 10},
			{Format: "protobuf", RecordBytes: 1024, Partitions: 1, Records: 128 << 10},
			{Format: "csv", RecordBytes: 100, Partitions: 8, Records: 1 << 20},
		},
		Modes: bothModes, Interval: time.Second, Repeat: 1,
		Latency:  []LatencyCase{{Mode: "exactly-once", Interval: time.Second, Duration: 5 * time.Second, Rate: 2000}},
		Recovery: true,
	}
}

// MemoryPlan is --memory: one checkpoint of 64 MiB, 512 MiB and 4 GiB
// (quick: 16, 64 and 256 MiB).
func MemoryPlan(quick bool) Plan {
	if quick {
		return Plan{Memory: []int64{16 << 20, 64 << 20, 256 << 20}}
	}
	return Plan{Memory: []int64{64 << 20, 512 << 20, 4 << 30}}
}
