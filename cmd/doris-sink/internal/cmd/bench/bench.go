// Package bench implements `doris-sink bench`: throughput, memory, latency
// and recovery of the sink measured against a bare franz-go consumer in
// one run (docs/design.md §8). The broker (kfake) and the Doris emulator (in
// counting mode) live in this process; every measured case runs in a
// child process (`doris-sink bench worker`) so that its peak RSS, CPU time
// and allocations are its own.
package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
)

// Options are the inputs of `doris-sink bench`.
type Options struct {
	IO *cmdutil.IOStreams

	Quick  bool
	Memory bool
	// Group runs only the group-mode cases (GroupPlan).
	Group      bool
	Output     string
	ProfileDir string
	Repeat     int
	// Cases, when set, restricts the run to these throughput combos of
	// the full matrix (e.g. "json-100B-p8"), without latency or recovery.
	Cases []string
	// Compress adds, per value (gz, lz4), an exactly-once sink case with
	// doris.properties.compress_type set to it ("exactly-once+gz").
	Compress []string
	// Parallel runs the parallel-load family only (DefaultParallelPlan):
	// several BEs with a per-load ceiling, K = 1, 2, 4, 8 and auto.
	Parallel bool
	// CaseBytes, when set, sizes every throughput combo of the plan
	// (Records = CaseBytes / RecordBytes); 0: DefaultCaseBytes.
	CaseBytes int64
	// NoPin leaves the child and the parent on every allowed CPU.
	NoPin bool

	// pinLine is the report's pinning line (set by Run).
	pinLine string

	// Plan, when set, replaces the plan chosen by Quick and Memory (tests).
	Plan *Plan
	// Worker starts a child; nil: DefaultWorkerCommand.
	Worker WorkerCommand
	// Member starts a group-mode member; nil: DefaultMemberCommand.
	Member MemberCommand
	// VictimReadyWithin bounds the wait for the recovery case's victim to
	// be ready to kill; 0: DefaultVictimReadyWithin.
	VictimReadyWithin time.Duration
}

// NewCmdBench returns the bench command (with its hidden worker
// subcommand); runF replaces Run in tests.
func NewCmdBench(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO}
	var caseBytes string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the sink against a bare Kafka consumer on this machine",
		Long: `Measure throughput (records/s, MB/s), CPU seconds per GB, peak RSS and
allocations per record of the sink (Kafka connector + loader + Doris client,
exactly-once and at-least-once), of a bare franz-go consumer reading the
same topic from the same broker, and of the limit line (the bare consumer
writing the values through an HTTP PUT to a discarding sink), one after
another in one run, and report each as a ratio to the baseline. Rates are
measured at steady state: between 10 % and 90 % of each 2 GiB topic's bytes
consumed, sampled in the child; the fixed costs (exec → first record,
Recover, first Stream Load, the commit tail) are reported beside them. Also visibility latency (produce → commit
visible), recovery time after kill -9, and with --memory peak RSS for one
checkpoint of 64 MiB, 512 MiB and 4 GiB.

An in-process Kafka (kfake) and the Doris emulator in counting mode (rows
parsed minimally, counted, not stored) run in this process; each case runs
in a child process. The emulator's and broker's CPU is this process's and
shares the machine's cores with the child: compare ratios, not absolute
figures, across machines. See docs/performance.md.`,
		Args: cobra.NoArgs,
		Example: `  # one 2 GiB combo, under a minute
  $ doris-sink bench --quick

  # the full matrix as JSON, one object per case
  $ doris-sink bench -o json

  # peak RSS for one checkpoint of 64 MiB, 512 MiB and 4 GiB
  $ doris-sink bench --memory

  # group mode: 1, 2 and 4 members sharing 4 slots (throughput, rebalance
  # pause, recovery of a killed member's partitions)
  $ doris-sink bench --group

  # medians of 3 rounds of two combos only, 512 MiB each
  $ doris-sink bench --case json-100B-p8,json-1KiB-p1 --repeat 3 --bytes 512MiB

  # the sink compressed beside uncompressed, in the same rounds
  $ doris-sink bench --case json-1KiB-p1 --compress gz,lz4 --repeat 3

  # the parallel-load curve: K = 1, 2, 4, 8, auto into 4 BEs of 16 MiB/s per load
  $ doris-sink bench --parallel --repeat 3

  # CPU profiles of every case's worker
  $ doris-sink bench --quick --profile-dir /tmp/prof`,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.Repeat < 1 {
				return cmdutil.FlagErrorf("--repeat must be at least 1, got %d", opts.Repeat)
			}
			if opts.Parallel && (opts.Memory || len(opts.Cases) > 0 || len(opts.Compress) > 0) {
				return cmdutil.FlagErrorf("--parallel cannot be combined with --memory, --case or --compress")
			}
			if opts.Parallel && opts.Group {
				return cmdutil.FlagErrorf("--parallel and --group cannot be combined")
			}
			if opts.Memory && opts.Group {
				return cmdutil.FlagErrorf("--memory and --group cannot be combined")
			}
			if len(opts.Cases) > 0 {
				if opts.Memory || opts.Group {
					return cmdutil.FlagErrorf("--case cannot be combined with --memory or --group")
				}
				if _, err := selectCombos(FullPlan(), opts.Cases); err != nil {
					return cmdutil.FlagErrorf("--case: %v", err)
				}
			}
			if caseBytes != "" {
				n, err := parseBytes(caseBytes)
				if err != nil || n < 1<<20 {
					return cmdutil.FlagErrorf("--bytes %q: want a size of at least 1MiB, e.g. 512MiB or 2GiB", caseBytes)
				}
				opts.CaseBytes = n
			}
			for _, v := range opts.Compress {
				if c, err := doris.ParseCompression(v); err != nil || c == doris.CompressNone {
					return cmdutil.FlagErrorf("--compress %q: want %s", v, doris.CompressionNames)
				}
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&caseBytes, "bytes", "", "size of every throughput combo's topic (default 2GiB); the steady-state window is 10 % to 90 % of it")
	fl.BoolVar(&opts.NoPin, "no-pin", false, "do not pin each case's child and this process to separate CPUs")
	fl.BoolVar(&opts.Quick, "quick", false, "reduced matrix (under a minute)")
	fl.BoolVar(&opts.Memory, "memory", false, "only the memory cases: peak RSS for one checkpoint of 64 MiB, 512 MiB, 4 GiB")
	fl.BoolVar(&opts.Group, "group", false, "only the group-mode cases: 1, 2 and 4 members sharing 4 slots (job.slots) of one job")
	fl.StringVar(&opts.ProfileDir, "profile-dir", "", "write a CPU profile of each case's worker to this directory")
	fl.StringSliceVar(&opts.Cases, "case", nil, "only these throughput combos of the full matrix, e.g. json-100B-p8 (repeatable; no latency or recovery)")
	fl.IntVar(&opts.Repeat, "repeat", 1, "run each throughput case this many times and keep the median")
	fl.BoolVar(&opts.Parallel, "parallel", false, "only the parallel-load family: 4 BEs of 16 MiB/s per load, the sink at doris.sub_loads 1, 2, 4, 8 and auto (doris.be_spread backends), p99 visibility with K = 4")
	fl.StringSliceVar(&opts.Compress, "compress", nil, "also run exactly-once with doris.properties.compress_type set to each of these (gz, lz4): cases named exactly-once+gz")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmd.AddCommand(newCmdWorker())
	return cmd
}

// newCmdWorker is the hidden child entry: a spec on stdin, the result on
// stdout.
func newCmdWorker() *cobra.Command {
	return &cobra.Command{
		Use:    "worker",
		Short:  "Run one bench case (internal: started by doris-sink bench)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return RunWorker(c.Context(), c.InOrStdin(), c.OutOrStdout())
		},
	}
}

// parseBytes reads a size: a number with an optional unit B, KiB, MiB, GiB
// (binary) or KB, MB, GB (decimal).
func parseBytes(v string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want e.g. 512MiB", v)
	}
	return n * mult, nil
}
