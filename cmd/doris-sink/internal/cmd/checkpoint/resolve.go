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
	// Table names the table whose txn is resolved ("db.table" or a table
	// of doris.database), needed when the checkpoint has uncommitted txns
	// of several tables.
	Table string
	// Sub names the sub-load of Table whose txn is resolved (-1: the
	// table's one uncommitted txn), needed when several sub-loads of the
	// table are uncommitted (doris.sub_loads).
	Sub int
	// Slot is the writer slot (group mode, job.slots) whose decided
	// checkpoint is resolved: the operator record is written for its
	// scope. 0, the standalone scope, by default.
	Slot   int
	DryRun bool
	Yes    bool
}

// ResolveResult is the output of `checkpoint resolve` (stable names).
type ResolveResult struct {
	Checkpoint uint64 `json:"checkpoint"`
	// Table is the resolved txn's table ("db.table").
	Table string `json:"table,omitempty"`
	Label string `json:"label,omitempty"`
	// TxnID is the decided txn id.
	TxnID   int64  `json:"txn_id,omitempty"`
	Assumed string `json:"assumed"`
	// Action is "record" or "nothing" (loader.ResolveRecord,
	// loader.ResolveNothing): the same with and without --dry-run.
	Action string `json:"action"`
	// Reason explains Action.
	Reason string `json:"reason"`
	// Doris is what Doris held for the label when asked.
	Doris  *loader.LabelHeld `json:"doris,omitempty"`
	By     string            `json:"by,omitempty"`
	DryRun bool              `json:"dry_run"`
	// Scope is the writer scope (slot) resolved with job.coordinator
	// kafka.
	Scope string `json:"scope,omitempty"`
	// StateTopic and Offset locate the operator record written (or
	// already pending) with job.coordinator kafka; the job applies it at
	// its next start.
	StateTopic string `json:"state_topic,omitempty"`
	Offset     *int64 `json:"offset,omitempty"`
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
twice. With job.coordinator file the job must be stopped (the store is
locked while it runs). With kafka the decision is written to the job's
state topic as an operator record (its own key and transactional id: a
running job is never fenced); the job applies it at its next start,
after checking it still names its decided checkpoint and agrees with
Doris, and records it in its state and ledger.

Doris is asked first. An --assume that contradicts what Doris still holds
for the label (visible while it is ABORTED, PREPARE or PRECOMMITTED;
aborted while it is VISIBLE or COMMITTED) is refused, naming the state and
txn id; one Doris agrees with, a committed or empty checkpoint, or an
assumption already recorded is "nothing to do" (exit 0). --dry-run prints
exactly what the real run would do.`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink checkpoint resolve -c orders.yaml --checkpoint 42 --assume aborted --dry-run
  $ doris-sink checkpoint resolve -c orders.yaml --checkpoint 42 --assume visible --yes`,
		RunE: func(c *cobra.Command, _ []string) error {
			switch {
			case opts.ConfigFile == "":
				return cmdutil.FlagErrorf("-c/--config is required")
			case opts.Checkpoint == 0:
				return cmdutil.FlagErrorf("--checkpoint is required (a checkpoint id ≥ 1)")
			case opts.Slot < 0:
				return cmdutil.FlagErrorf("--slot must be ≥ 0, got %d", opts.Slot)
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
	cmd.Flags().StringVar(&opts.Table, "table", "", "the table whose txn to resolve, when the checkpoint has uncommitted txns of several")
	cmd.Flags().IntVar(&opts.Sub, "sub", -1, "the sub-load of --table whose txn to resolve, when several of its sub-loads (doris.sub_loads) are uncommitted")
	cmd.Flags().IntVar(&opts.Slot, "slot", 0, "the writer slot whose checkpoint to resolve (group mode, job.slots; job.coordinator kafka)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what would be recorded; change nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunResolve plans the resolution (loader.PlanResolve: the store, then
// what Doris holds for the label), prints the plan with --dry-run, and
// otherwise records it through loader.ResolveAssume, which re-plans under
// the store's lock and so does exactly what was printed. An assumption
// that contradicts Doris is refused (*loader.ResolveConflictError); a
// checkpoint that needs no decision is "nothing to do" (exit 0).
func RunResolve(ctx context.Context, o *ResolveOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedJob|config.NeedTable)
	if err != nil {
		return err
	}
	if cfg.Job.Coordinator == config.CoordinatorKafka {
		client, err := o.Factory.Doris(cfg)
		if err != nil {
			return err
		}
		defer client.Close()
		return o.resolveKafka(ctx, cfg, client)
	}
	if o.Slot != 0 {
		return cmdutil.FlagErrorf("--slot %d: writer slots exist only with job.coordinator kafka", o.Slot)
	}
	st, err := checkpoint.ReadFile(cfg.Job.DataDir)
	if err != nil {
		return err
	}
	if o := st.Owner; o.Job != cfg.Job.Name || o.DB != cfg.Doris.Database || o.Table != cfg.Doris.Table {
		return fmt.Errorf("store %s belongs to job %s table %s.%s, not to this config (job %s table %s.%s)",
			cfg.Job.DataDir, o.Job, o.DB, o.Table, cfg.Job.Name, cfg.Doris.Database, cfg.Doris.Table)
	}
	client, err := o.Factory.Doris(cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	// The real run needs the store's lock (no job may run); so does the dry
	// run, to say so too. Opening an existing store writes nothing.
	store, err := checkpoint.OpenFile(cfg.Job.DataDir, st.Owner)
	if err != nil {
		return fmt.Errorf("resolve checkpoint %d: %w (stop the job first)", o.Checkpoint, err)
	}
	defer store.Close()
	opts := []loader.ResolveOpt{loader.ResolveCheck(client, cfg.Doris.Database), loader.ResolveLedger(cfg.Job.DataDir)}
	if o.Table != "" {
		opts = append(opts, loader.ResolveTable(o.Table))
		if o.Sub >= 0 {
			opts = append(opts, loader.ResolveSub(o.Sub))
		}
	}
	p, err := loader.PlanResolve(ctx, store, o.Checkpoint, o.Assume, opts...)
	if err != nil {
		return err
	}
	res := ResolveResult{Checkpoint: p.CheckpointID, Table: p.Table, Label: p.Label, TxnID: p.TxnID, Assumed: p.Assumed,
		Action: p.Action, Reason: p.Reason, Doris: p.Doris, DryRun: o.DryRun}
	if o.DryRun || p.Action == loader.ResolveNothing {
		return o.print(res)
	}
	fmt.Fprintf(o.IO.ErrOut, "Warning: a wrong --assume %s %s.\n", o.Assume,
		map[string]string{checkpoint.ResolvedVisible: "loses the checkpoint's rows", checkpoint.ResolvedAborted: "loads its rows twice"}[o.Assume])
	action := fmt.Sprintf("record checkpoint %d (%s) as %s", o.Checkpoint, res.Label, o.Assume)
	if err := cmdutil.Confirm(o.IO, o.Yes, action); err != nil {
		return err
	}
	r, err := loader.ResolveAssume(ctx, store, o.Checkpoint, o.Assume, opts...)
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
	var err error
	switch {
	case r.Action == loader.ResolveNothing:
		_, err = fmt.Fprintf(o.IO.Out, "Nothing to do for checkpoint %d (%s): %s\n", r.Checkpoint, r.Label, r.Reason)
	case r.DryRun:
		_, err = fmt.Fprintf(o.IO.Out, "Would record checkpoint %d (%s) as %s: %s\n", r.Checkpoint, r.Label, r.Assumed, r.Reason)
	default:
		_, err = fmt.Fprintf(o.IO.Out, "Recorded checkpoint %d (%s) as %s: %s\n", r.Checkpoint, r.Label, r.Assumed, r.Reason)
	}
	if err == nil && r.Doris != nil {
		_, err = fmt.Fprintf(o.IO.Out, "Doris holds label %s as %s\n", r.Label, r.Doris)
	}
	return err
}
