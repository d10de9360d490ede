package bench

import (
	"fmt"
	"slices"
	"time"
)

// Combo is one seeded topic of the throughput matrix: the baseline and
// every sink mode read the same topic.
type Combo struct {
	// Format is "json", "csv", "avro", "protobuf" or "json_schema". An
	// avro or protobuf combo carries the same logical data as the json
	// combo of its RecordBytes (the JSON row's size; its values are
	// smaller) for the avro/json ratios; a json_schema value is the json
	// row after a 5-byte header.
	Format      string
	RecordBytes int
	Partitions  int
	Records     int64
	// Extra are sink modes run on this combo only, beside Plan.Modes
	// (e.g. "exactly-once+lz4", "exactly-once+tls").
	Extra []string
}

// DefaultCaseBytes sizes every throughput combo of the full and quick
// plans: 2 GiB of JSON rows (Records = DefaultCaseBytes / RecordBytes),
// long enough that the window from 10 % to 90 % of the bytes is the stream,
// not the start-up (docs/performance.md).
const DefaultCaseBytes = 2 << 30

// sized returns the combos with Records set for bytes of RecordBytes rows.
func sized(cs []Combo, bytes int64) []Combo {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Records = max(bytes/int64(out[i].RecordBytes), 1)
	}
	return out
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
	// FetchMaxBytes is every throughput child's fetch bound (the sink's
	// kafka.Config.FetchMaxBytes, and the baseline's and limit line's
	// fetch and partition bounds); 0: the Connector's default (tests: a
	// small case still spans several polls).
	FetchMaxBytes int32
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

// costModes are the CPU-s/GB lines users pay for beside the uncompressed
// sink, run on json-1KiB-p1: compress_type lz4 and gz, FE and BE over TLS.
var costModes = []string{"exactly-once+lz4", "exactly-once+gz", "exactly-once+tls"}

func matrix(bytes int64) []Combo {
	var out []Combo
	for _, size := range []int{100, 1024} {
		for _, f := range []string{"json", "csv"} {
			for _, p := range []int{1, 8} {
				c := Combo{Format: f, RecordBytes: size, Partitions: p}
				if f == "json" && size == 1024 && p == 1 {
					c.Extra = costModes
				}
				out = append(out, c)
			}
		}
	}
	// Avro, Protobuf and JSON Schema beside JSON 1 KiB: as many records as
	// json-1KiB, the same logical data.
	for _, f := range []string{"avro", "protobuf", "json_schema"} {
		for _, p := range []int{1, 8} {
			out = append(out, Combo{Format: f, RecordBytes: 1024, Partitions: p})
		}
	}
	return sized(out, bytes)
}

// throughputModes are the children of every combo beside the baseline:
// the limit line, then the sink in both guarantees.
var throughputModes = []string{"limit", "exactly-once", "at-least-once"}

// FullPlan is the full matrix, DefaultCaseBytes per combo: 100 B and 1 KiB,
// JSON and CSV, 1 and 8 partitions; Avro, Protobuf and JSON Schema with the
// data of JSON 1 KiB; each read by the baseline, the limit line and the sink
// (exactly-once, at-least-once; json-1KiB-p1 also lz4, gz and TLS); group
// mode with 2 members; latency at 1 s and 10 s; recovery.
func FullPlan() Plan {
	return Plan{
		Combos: matrix(DefaultCaseBytes), Modes: throughputModes, Interval: time.Second, Repeat: 1,
		Group: []GroupCase{groupCase(2, false)},
		Latency: []LatencyCase{
			{Mode: "exactly-once", Interval: time.Second, Duration: 12 * time.Second, Rate: 5000},
			{Mode: "at-least-once", Interval: time.Second, Duration: 12 * time.Second, Rate: 5000},
			{Mode: "exactly-once", Interval: 10 * time.Second, Duration: 45 * time.Second, Rate: 5000},
			{Mode: "at-least-once", Interval: 10 * time.Second, Duration: 45 * time.Second, Rate: 5000},
		},
		Recovery: true,
	}
}

// QuickPlan is --quick (about a minute): one combo of the full size,
// json-1KiB-p1, read by the baseline, the limit line and the exactly-once
// sink.
func QuickPlan() Plan {
	return Plan{
		Combos: sized([]Combo{{Format: "json", RecordBytes: 1024, Partitions: 1}}, DefaultCaseBytes),
		Modes:  []string{"limit", "exactly-once"}, Interval: time.Second, Repeat: 1,
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
