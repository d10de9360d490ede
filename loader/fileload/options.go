package fileload

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader"
)

// Doris is what a load needs of Doris: the loader's Stream Load and 2PC
// calls, and the FE configuration that bounds a load (ADMIN SHOW FRONTEND
// CONFIG). *doris.Client implements it.
type Doris interface {
	loader.Doris
	FrontendConfig(ctx context.Context, pattern string) (map[string]string, error)
}

// Defaults of Options.
const (
	// DefaultWorkers is the default Options.Workers.
	DefaultWorkers = 4
	// DefaultAssumedRate is the default Options.AssumedRate: 10 MB/s per
	// worker, a tenth of what one Stream Load into one real BE ingests
	// (doris-streamloader's sizing), so the estimate errs long.
	DefaultAssumedRate = 10 << 20
)

// Options configure Run.
type Options struct {
	// Client talks to Doris. Required.
	Client Doris
	// DB and Table are the target table. Required.
	DB, Table string
	// Files are the input files, loaded in this order; a name ending in
	// .gz is decompressed as it streams. Required.
	Files []string
	// Format is "csv" (default; Doris's CSV options come from Headers) or
	// "json" (JSON lines: one object per line, read_json_by_line).
	Format string
	// Headers are extra Stream Load headers (column_separator, columns,
	// max_filter_ratio, ...; docs/doris-facts.md §1.4). label,
	// two_phase_commit, format and read_json_by_line are set by the load
	// and refused here.
	Headers map[string]string
	// Compression compresses each worker's body as it streams (gz or lz4;
	// "" none) and sends compress_type with it (docs/performance.md
	// "Compression"): fewer bytes on the wire for CPU.
	Compression doris.Compression
	// Workers is how many txns stream at once, W. Default DefaultWorkers.
	// At most label.MaxSubLoads and the FE's max_running_txn_num_per_db.
	Workers int
	// ChunkBytes is the chunk size (0: auto, a quarter of a worker's share
	// between 1 MiB and 256 MiB).
	ChunkBytes int64
	// StoreDir is the store's directory. Required (the command derives
	// one from the table and the file set).
	StoreDir string
	// Split lets a load too large for one round (see AssumedRate) run in
	// rounds, each atomic; without it such a load is refused before
	// anything begins.
	Split bool
	// AssumedRate is the Stream Load rate per worker (bytes/s) the
	// duration estimate assumes. Default DefaultAssumedRate. A round holds
	// at most Workers × AssumedRate × precommit timeout / 2 bytes.
	AssumedRate int64
	// Failpoints arm the loader's cut points (loader.AllFailpoints) in the
	// load's protocol; nil: none.
	Failpoints *loader.Failpoints
	// Retry bounds commit and abort retries (loader.Retry defaults).
	Retry loader.Retry
	// Logger receives the load's progress events (nil: discard).
	Logger *slog.Logger
	// Now is the clock (nil: time.Now); it times the precommit window.
	Now func() time.Time
	// Progress, when not nil, is updated as bytes stream (for a progress
	// line); read it from any goroutine.
	Progress *Progress
}

// Progress counts a running load's bytes for a progress display.
type Progress struct {
	// Sent is the bytes streamed by this run so far (decompressed).
	Sent atomic.Int64
	// Total is the estimated bytes of the load left when this run began.
	Total atomic.Int64
	// Committed is the txns committed by this run.
	Committed atomic.Int64
}

func (o *Options) validate() error {
	switch {
	case o.Client == nil:
		return fmt.Errorf("file load: Client is required")
	case o.DB == "" || o.Table == "":
		return fmt.Errorf("file load: the target table db.table is required")
	case o.StoreDir == "":
		return fmt.Errorf("file load into %s.%s: StoreDir is required", o.DB, o.Table)
	case o.Format != "" && o.Format != "csv" && o.Format != "json":
		return fmt.Errorf("file load into %s.%s: format %q: want csv or json", o.DB, o.Table, o.Format)
	case o.ChunkBytes < 0:
		return fmt.Errorf("file load into %s.%s: chunk size %d must not be negative", o.DB, o.Table, o.ChunkBytes)
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.Workers < 1 || o.Workers > label.MaxSubLoads {
		return fmt.Errorf("file load into %s.%s: %d workers: want 1 to %d (one label sub-load each)",
			o.DB, o.Table, o.Workers, label.MaxSubLoads)
	}
	if o.AssumedRate == 0 {
		o.AssumedRate = DefaultAssumedRate
	}
	if o.AssumedRate < 0 {
		return fmt.Errorf("file load into %s.%s: assumed rate %d must be positive", o.DB, o.Table, o.AssumedRate)
	}
	for k, v := range o.Headers {
		switch strings.ToLower(k) {
		case "label", "two_phase_commit", "format", "read_json_by_line", "compress_type":
			return fmt.Errorf("file load into %s.%s: header %q is set by the load; use the format or compression option",
				o.DB, o.Table, k)
		}
		if err := splittable(k, v); err != nil {
			return fmt.Errorf("file load into %s.%s: %w", o.DB, o.Table, err)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
