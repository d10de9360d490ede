package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Options are the inputs of `doris-sink verify`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory
	// ConfigFile is -c.
	ConfigFile string
	// Output is -o: table or json.
	Output string
	// SkipKafka and SkipDoris leave those checks out (reported as
	// unverifiable).
	SkipKafka, SkipDoris bool

	loadConfig func() (*config.Config, error)
}

// NewCmdVerify returns the verify command. runF replaces the run function
// in tests (nil: Run).
func NewCmdVerify(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "verify -c config.yaml",
		Short: "Reconcile the evidence ledger with Doris and Kafka",
		Long: `verify reads the evidence ledger and checkpoint store in job.data_dir and checks:
  - Doris: every decided label is VISIBLE/COMMITTED, under the txn id the ledger names;
  - Kafka: the offset ranges of consecutive checkpoints are contiguous per partition
    (no gap, no overlap) from the first checkpoint, and end at or below the high watermark;
  - rows: each load has one row per offset.
It exits 0 when everything reconciles, 5 when a gap is found (offsets skipped,
loaded twice, or a decided checkpoint missing in Doris), 1 on other mismatches.`,
		Example: `  doris-sink verify -c orders.yaml
  doris-sink verify -c orders.yaml -o json | jq '.findings'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.loadConfig = func() (*config.Config, error) {
				return cmdutil.LoadConfig(f, cmd, opts.ConfigFile, config.NeedJob|config.NeedTable)
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmd.Flags().BoolVar(&opts.SkipKafka, "skip-kafka", false, "do not check offsets against Kafka")
	cmd.Flags().BoolVar(&opts.SkipDoris, "skip-doris", false, "do not look labels up in Doris")
	return cmd
}

// Run loads the config, reconciles and prints the report. It returns the
// report's error (a *cmdutil.GapsError when a gap was found).
func Run(ctx context.Context, opts *Options) error {
	cfg, err := opts.loadConfig()
	if err != nil {
		return err
	}
	rep, err := VerifyConfig(ctx, opts.Factory, cfg, opts.SkipDoris, opts.SkipKafka)
	if err != nil {
		return err
	}
	if opts.Output == cmdutil.OutputJSON {
		if err := cmdutil.WriteJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	} else if err := Print(opts.IO, rep); err != nil {
		return err
	}
	return rep.Err()
}

// VerifyConfig reconciles the job of cfg: its ledger and store in
// job.data_dir, Doris and Kafka as configured (skipped when asked). An
// unreadable ledger is an error; lookup failures are findings.
func VerifyConfig(ctx context.Context, f *cmdutil.Factory, cfg *config.Config, skipDoris, skipKafka bool) (*Report, error) {
	dir := cfg.Job.DataDir
	entries, torn, err := ledger.ReadFile(dir)
	if err != nil {
		return nil, fmt.Errorf("verify job %s: %w", cfg.Job.Name, err)
	}
	in := Input{Job: cfg.Job.Name, DB: cfg.Doris.Database, Table: cfg.Doris.Table, Entries: entries, Torn: torn}
	st, err := checkpoint.ReadFile(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("verify job %s: %w", cfg.Job.Name, err)
	default:
		in.State = st
	}
	if !skipDoris {
		c, err := f.Doris(cfg)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		in.Doris = c
	}
	if !skipKafka && cfg.Kafka.Topic != "" {
		k, err := newKafka(cfg)
		if err != nil {
			return nil, err
		}
		defer k.Close()
		in.Kafka = k
	}
	return Reconcile(ctx, in), nil
}

// Print writes the report as a table, then the findings and a summary.
func Print(io *cmdutil.IOStreams, rep *Report) error {
	t := cmdutil.NewTable(io, "checkpoint", "label", "txn", "ledger", "doris", "offsets", "rows", "status")
	for _, c := range rep.Checkpoints {
		rows := "?"
		if c.RowsTotal >= 0 {
			rows = strconv.FormatInt(c.RowsLoaded, 10)
		}
		t.AddRow(strconv.FormatUint(c.ID, 10), c.Label, strconv.FormatInt(c.TxnID, 10), c.Ledger, c.Doris,
			strconv.FormatInt(c.Offsets, 10), rows, c.Status)
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(io.ErrOut, f.String())
	}
	fmt.Fprintf(io.ErrOut, "%s %s: %d checkpoints, %d offsets, %d rows loaded; %d gap(s), %d error(s), %d warning(s)\n",
		rep.Job, rep.Table, len(rep.Checkpoints), rep.Offsets, rep.RowsLoaded,
		rep.Count(SeverityGap), rep.Count(SeverityError), rep.Count(SeverityWarning))
	return nil
}
