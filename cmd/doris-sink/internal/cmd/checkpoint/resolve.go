package checkpoint

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// ResolveOptions are the inputs of `checkpoint resolve`.
type ResolveOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	Checkpoint uint64
	Assume     string
	DryRun     bool
	Yes        bool
}

// ResolveResult is the output of `checkpoint resolve` (stable names).
type ResolveResult struct {
	Checkpoint uint64 `json:"checkpoint"`
	Label      string `json:"label,omitempty"`
	Assumed    string `json:"assumed"`
	By         string `json:"by,omitempty"`
	DryRun     bool   `json:"dry_run"`
}

// NewCmdResolve returns `checkpoint resolve`; runF replaces Run in tests.
func NewCmdResolve(f *cmdutil.Factory, runF func(context.Context, *ResolveOptions) error) *cobra.Command {
	opts := &ResolveOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "resolve -c <config> --checkpoint <id> --assume visible|aborted",
		Short: "Record the fate of a decided checkpoint whose label Doris forgot",
		Long: `When a decided checkpoint's label is UNKNOWN to Doris (its label expired
while the job was down), the job stops and asks the operator. Check the
table, then record what happened:

  --assume visible   the rows are in the table: the checkpoint is marked
                     committed and the job moves on
  --assume aborted   the rows are not: the job replays [start, end) of the
                     checkpoint into the same label on restart

A wrong "visible" loses the checkpoint's rows; a wrong "aborted" loads them
twice. The job must be stopped (the store is locked while it runs).`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink checkpoint resolve -c orders.yaml --checkpoint 42 --assume aborted --dry-run
  $ doris-sink checkpoint resolve -c orders.yaml --checkpoint 42 --assume visible --yes`,
		RunE: func(c *cobra.Command, _ []string) error {
			switch {
			case opts.ConfigFile == "":
				return cmdutil.FlagErrorf("-c/--config is required")
			case opts.Checkpoint == 0:
				return cmdutil.FlagErrorf("--checkpoint is required (a checkpoint id ≥ 1)")
			case opts.Assume != checkpoint.ResolvedVisible && opts.Assume != checkpoint.ResolvedAborted:
				return cmdutil.FlagErrorf("--assume must be %s or %s, got %q", checkpoint.ResolvedVisible, checkpoint.ResolvedAborted, opts.Assume)
			}
			opts.Cmd = c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return RunResolve(c.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmd.Flags().Uint64Var(&opts.Checkpoint, "checkpoint", 0, "the decided checkpoint id")
	cmd.Flags().StringVar(&opts.Assume, "assume", "", "visible or aborted")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what would be recorded; change nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunResolve records the resolution through loader.ResolveAssume.
func RunResolve(ctx context.Context, o *ResolveOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedJob|config.NeedTable)
	if err != nil {
		return err
	}
	res := ResolveResult{Checkpoint: o.Checkpoint, Assumed: o.Assume, DryRun: o.DryRun}
	st, err := checkpoint.ReadFile(cfg.Job.DataDir)
	if err != nil {
		return err
	}
	if o := st.Owner; o.Job != cfg.Job.Name || o.DB != cfg.Doris.Database || o.Table != cfg.Doris.Table {
		return fmt.Errorf("store %s belongs to job %s table %s.%s, not to this config (job %s table %s.%s)",
			cfg.Job.DataDir, o.Job, o.DB, o.Table, cfg.Job.Name, cfg.Doris.Database, cfg.Doris.Table)
	}
	if st.Decided == nil || st.Decided.ID != o.Checkpoint {
		return fmt.Errorf("checkpoint %d is not the last decided checkpoint of %s; only that one can be resolved", o.Checkpoint, cfg.Job.DataDir)
	}
	res.Label = st.Decided.Label
	if o.DryRun {
		return o.print(res)
	}
	fmt.Fprintf(o.IO.ErrOut, "Warning: a wrong --assume %s %s.\n", o.Assume,
		map[string]string{checkpoint.ResolvedVisible: "loses the checkpoint's rows", checkpoint.ResolvedAborted: "loads its rows twice"}[o.Assume])
	action := fmt.Sprintf("record checkpoint %d (%s) as %s", o.Checkpoint, res.Label, o.Assume)
	if err := cmdutil.Confirm(o.IO, o.Yes, action); err != nil {
		return err
	}
	store, err := checkpoint.OpenFile(cfg.Job.DataDir, st.Owner)
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := loader.ResolveAssume(ctx, store, o.Checkpoint, o.Assume, loader.ResolveLedger(cfg.Job.DataDir))
	if r != nil {
		res.By = r.By
	}
	if err != nil {
		return err
	}
	return o.print(res)
}

func (o *ResolveOptions) print(r ResolveResult) error {
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, r)
	}
	verb := "Recorded"
	if r.DryRun {
		verb = "Would record"
	}
	_, err := fmt.Fprintf(o.IO.Out, "%s checkpoint %d (%s) as %s\n", verb, r.Checkpoint, r.Label, r.Assumed)
	return err
}
