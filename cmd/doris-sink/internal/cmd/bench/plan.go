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
	// Group are the group-mode cases (--group).
	Group []GroupCase
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
