package bench

import "time"

// Worker kinds: what one child process measures.
const (
	kindBaseline = "baseline" // bare franz-go consumer, discarding
	kindSink     = "sink"     // loader/kafka Connector + loader.Loader + doris client
	kindLatency  = "latency"  // the sink while the worker produces at a fixed rate
	kindVictim   = "victim"   // the sink, killed -9 by the parent mid-stream
	kindRecover  = "recover"  // the sink restarted on the victim's store
	kindMemory   = "memory"   // loader.Write loop of generated rows, one checkpoint
	kindLimit    = "limit"    // bare consumer writing the values to a discarding HTTP sink
)

// spec is what the parent asks a worker to do (JSON on the worker's
// stdin).
type spec struct {
	Kind string `json:"kind"`
	// Kafka side.
	Brokers []string `json:"brokers,omitempty"`
	Topic   string   `json:"topic,omitempty"`
	// End is the end offset of every partition: a consumer is done when it
	// read up to it (baseline, sink).
	End map[int32]int64 `json:"end,omitempty"`
	// TotalBytes are the value bytes of the topic up to End: the
	// steady-state window runs from windowFrom to windowTo of them (0: no
	// window).
	TotalBytes int64 `json:"total_bytes,omitempty"`
	// Format is "json", "csv", "avro", "protobuf" or "json_schema";
	// RecordBytes the size of generated rows (for avro and protobuf: of
	// the JSON row of the same data).
	Format string `json:"format,omitempty"`
	// Registry is the Schema Registry URL of formats avro, protobuf and
	// json_schema.
	Registry    string `json:"registry,omitempty"`
	RecordBytes int    `json:"record_bytes,omitempty"`
	// Doris side.
	FE       string        `json:"fe,omitempty"`
	MySQL    string        `json:"mysql,omitempty"`
	DB       string        `json:"db,omitempty"`
	Table    string        `json:"table,omitempty"`
	Job      string        `json:"job,omitempty"`
	DataDir  string        `json:"data_dir,omitempty"`
	Mode     string        `json:"mode,omitempty"` // exactly-once | at-least-once
	Interval time.Duration `json:"interval,omitempty"`
	// MaxRows caps rows per checkpoint (victim: checkpoints come fast).
	MaxRows int64 `json:"max_rows,omitempty"`
	// Latency: produce Rate records/s for Duration.
	Rate     int           `json:"rate,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// Memory: write Bytes of rows in one checkpoint.
	Bytes int64 `json:"bytes,omitempty"`

	// FetchMaxBytes bounds each fetch of the baseline, limit and sink
	// consumers (0: kafka.DefaultFetchMaxBytes).
	FetchMaxBytes int32 `json:"fetch_max_bytes,omitempty"`
	// Compress is the sink's doris.properties.compress_type ("" none).
	Compress string `json:"compress,omitempty"`
	// SubLoads is the sink's doris.sub_loads K (0: 1); SubLoadsAuto is
	// doris.sub_loads: auto (SubLoads then the starting K).
	SubLoads     int  `json:"sub_loads,omitempty"`
	SubLoadsAuto bool `json:"sub_loads_auto,omitempty"`
	// BESpread is the sink's doris.be_spread ("" fe).
	BESpread string `json:"be_spread,omitempty"`
	// TLSCAPEM, when set, is the CA of the https FE and BE (FE is then an
	// https URL; the MySQL front stays plain).
	TLSCAPEM string `json:"tls_ca_pem,omitempty"`
	// LimitURL is where a limit worker PUTs the record values (the
	// parent's discarding sink).
	LimitURL string `json:"limit_url,omitempty"`
	// PinCPUs, when set, are the CPUs the worker binds itself to first.
	PinCPUs []int `json:"pin_cpus,omitempty"`
	// CPUProfile, when set, is where the worker writes a CPU profile of
	// its measured phase.
	CPUProfile string `json:"cpu_profile,omitempty"`
}

// workerResult is what a worker reports (the last JSON line on its
// stdout). Times are wall-clock Unix nanoseconds where named so; the
// parent and its children share the host clock.
type workerResult struct {
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Mallocs uint64  `json:"mallocs"`
	AllocB  uint64  `json:"alloc_bytes"`
	GoSysMB float64 `json:"go_sys_mb"`
	// PeakRSSMB is VmHWM of this process: see peakRSS.
	PeakRSSMB float64   `json:"peak_rss_mb"`
	Checkpts  int       `json:"checkpoints"`
	LatencyMS []float64 `json:"latency_ms,omitempty"` // p50, p99, max
	Samples   int       `json:"samples,omitempty"`
	// Recovery.
	RecoverStart  int64    `json:"recover_start_unix_ns,omitempty"`
	RecoverEnd    int64    `json:"recover_end_unix_ns,omitempty"`
	FirstRead     int64    `json:"first_read_unix_ns,omitempty"`
	LabelsChecked int      `json:"labels_checked,omitempty"`
	Actions       []string `json:"actions,omitempty"`
	// SubLoadsEnd is the loader's K of the table at the end (sink).
	SubLoadsEnd int `json:"sub_loads_end,omitempty"`
	// Window is the steady-state window (baseline, sink, limit), nil when
	// the case was too small to have one.
	Window *window `json:"window,omitempty"`
	// Fixed costs (wall-clock Unix ns, 0 when not measured):
	// FirstRecord is when the first poll's records were handled, FirstBegin
	// when the first Stream Load began (sink), LastByte when the last
	// record's poll was handled and Done when the measured phase ended
	// (sink: the last checkpoint committed). RecoverStart and RecoverEnd
	// bracket the loader's Recover call.
	FirstRecord int64 `json:"first_record_unix_ns,omitempty"`
	FirstBegin  int64 `json:"first_begin_unix_ns,omitempty"`
	LastByte    int64 `json:"last_byte_unix_ns,omitempty"`
	Done        int64 `json:"done_unix_ns,omitempty"`
	// PinnedCPUs is the worker's CPU affinity after PinCPUs was applied.
	PinnedCPUs []int `json:"pinned_cpus,omitempty"`
	// Event is set on progress lines (victim: "ready"), not on the result.
	Event string `json:"event,omitempty"`
}
