package txn

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
	"github.com/doris-sink/doris-sink/doris"
)

// Operation is commit or abort.
type Operation string

// Operations of `txn commit` and `txn abort`.
const (
	Commit Operation = "commit"
	Abort  Operation = "abort"
)

// DecideOptions are the inputs of `txn commit` and `txn abort`.
type DecideOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	Op         Operation
	ConfigFile string
	Output     string
	LabelFlag  string
	DryRun     bool
	Yes        bool
	// Force skips the check against the owning job's checkpoint store.
	Force bool

	Target Target
	client *doris.Client
	db     string
	cfg    *config.Config
}

// DecideResult is the output of `txn commit|abort` (stable JSON names).
type DecideResult struct {
	Operation string `json:"operation"`
	DB        string `json:"db"`
	TxnID     int64  `json:"txn_id,omitempty"`
	Label     string `json:"label,omitempty"`
	// Before is the transaction before the act, when SHOW TRANSACTION
	// answered.
	Before *view.Txn `json:"before,omitempty"`
	// After is the transaction once the act was done (looked up again;
	// absent with --dry-run or when SHOW TRANSACTION did not answer).
	After  *view.Txn `json:"after,omitempty"`
	DryRun bool      `json:"dry_run"`
	// Outcome is "committed", "aborted", "already committed", "already
	// aborted", or "would commit"/"would abort" with --dry-run.
	Outcome string `json:"outcome"`
}

// NewCmdDecide returns `txn commit` or `txn abort`; runF replaces Run in
// tests (called after Complete and Validate).
func NewCmdDecide(f *cmdutil.Factory, op Operation, runF func(context.Context, *DecideOptions) error) *cobra.Command {
	opts := &DecideOptions{IO: f.IO, Factory: f, Op: op}
	short := map[Operation]string{
		Commit: "Commit a PRECOMMITTED transaction (makes its rows visible)",
		Abort:  "Abort a PREPARE or PRECOMMITTED transaction (drops its rows)",
	}[op]
	cmd := &cobra.Command{
		Use:   string(op) + " [<txn-id> | --label <label>]",
		Short: short,
		Long: short + `.

A running or restarting doris-sink job recovers its own labels (commits
decided ones, aborts undecided ones). A label of a doris-sink job is
therefore checked against that job's checkpoint store (pass the job's
config with -c): committing an announced, undecided label, committing a
heal attempt instead of the decided txn, and aborting a decided txn are
refused, naming the command to use instead; what the job's recovery would
do itself is allowed. Without the job's config such a label is refused
unless --force. Prefer --dry-run first (it applies the same checks).
Without a terminal, --yes is required.`,
		Args: cobra.MaximumNArgs(1),
		Example: fmt.Sprintf(`  $ doris-sink txn %[1]s 1001 --db demo --dry-run
  $ doris-sink txn %[1]s --label orders-eos:demo-orders:0:42 --db demo --yes`, op),
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.Validate(args); err != nil {
				return err
			}
			opts.Cmd = c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			if err := opts.Complete(); err != nil {
				return err
			}
			defer opts.client.Close()
			return opts.Run(c.Context())
		},
	}
	cmd.Flags().StringVar(&opts.LabelFlag, "label", "", "the transaction's label instead of its id (Doris 2.1+)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show the transaction and what would be done; change nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "act on a doris-sink job's label without checking the job's checkpoint store")
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmdutil.AddDorisFlags(cmd)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Validate checks the arguments.
func (o *DecideOptions) Validate(args []string) error {
	t, err := parseTarget(args, o.LabelFlag)
	if err != nil {
		return err
	}
	o.Target = t
	return nil
}

// Complete loads the config and the client.
func (o *DecideOptions) Complete() error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, 0)
	if err != nil {
		return err
	}
	c, db, err := connectCfg(o.Factory, cfg)
	if err != nil {
		return err
	}
	o.client, o.db, o.cfg = c, db, cfg
	return nil
}

// Run shows the transaction, warns, asks for confirmation and acts.
func (o *DecideOptions) Run(ctx context.Context) error {
	res := &DecideResult{Operation: string(o.Op), DB: o.db, TxnID: o.Target.ID, Label: o.Target.Label, DryRun: o.DryRun}
	t, lerr := lookup(ctx, o.client, o.db, o.Target)
	if lerr == nil {
		res.Before = view.FromTransaction(t)
		res.TxnID, res.Label = t.ID, t.Label
	} else if o.DryRun {
		return lerr
	}
	if res.Label == "" && !o.Force {
		return fmt.Errorf("cannot tell which job owns %s (pass --force to act without knowing): %w", o.Target, lerr)
	}
	note, err := o.guard(ctx, o.cfg, res.Label, res.TxnID)
	if err != nil {
		return err
	}
	action := fmt.Sprintf("%s %s in db %s", o.Op, o.Target, o.db)
	if o.DryRun {
		if note != "" {
			fmt.Fprintln(o.IO.ErrOut, note+".")
		}
		res.Outcome = "would " + string(o.Op)
		return o.print(res)
	}
	o.warn(res, note)
	if err := cmdutil.Confirm(o.IO, o.Yes, action); err != nil {
		return err
	}
	switch {
	case o.Op == Commit && o.Target.Label != "":
		err = o.client.CommitLabel(ctx, o.db, o.Target.Label)
	case o.Op == Commit:
		err = o.client.CommitTxn(ctx, o.db, o.Target.ID)
	case o.Target.Label != "":
		err = o.client.AbortLabel(ctx, o.db, o.Target.Label)
	default:
		err = o.client.AbortTxn(ctx, o.db, o.Target.ID)
	}
	switch {
	case err == nil && o.Op == Commit:
		res.Outcome = "committed"
	case err == nil:
		res.Outcome = "aborted"
	case o.Op == Commit && errors.Is(err, doris.ErrTxnAlreadyCommitted):
		res.Outcome = "already committed"
	case o.Op == Abort && errors.Is(err, doris.ErrTxnAlreadyAborted):
		res.Outcome = "already aborted"
	case doris.IsAmbiguous(err):
		return fmt.Errorf("%s: outcome unknown, look it up with `doris-sink txn status`: %w", action, err)
	default:
		return fmt.Errorf("%s: %w", action, err)
	}
	after := o.Target
	if res.TxnID != 0 {
		after = Target{ID: res.TxnID} // by id: a label may name a newer txn
	}
	if t, err := lookup(ctx, o.client, o.db, after); err == nil {
		res.After = view.FromTransaction(t)
	}
	return o.print(res)
}

// warn prints the risk on stderr before acting (kubectl delete style):
// note is the guard's verdict on a doris-sink label, "" for any other.
func (o *DecideOptions) warn(res *DecideResult, note string) {
	if note != "" {
		fmt.Fprintln(o.IO.ErrOut, note+".")
		return
	}
	fmt.Fprintf(o.IO.ErrOut, "Warning: %s of %s: no doris-sink job owns this label, nothing will recover it.\n", o.Op, res.Label)
}

func (o *DecideOptions) print(res *DecideResult) error {
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, res)
	}
	kv := cmdutil.NewKV(o.IO)
	kv.Add("Outcome", res.Outcome)
	kv.Add("Database", res.DB)
	if res.Label != "" {
		kv.Add("Label", res.Label)
	}
	// The transaction as it is now when it was looked up again after the
	// act; the status before is labelled as such (beside "Outcome
	// committed", a bare PRECOMMITTED read as the result).
	switch {
	case res.After != nil:
		view.AddTxn(kv, res.After)
		if res.Before != nil {
			kv.Add("Status before", res.Before.Status)
		}
	case res.Before != nil && res.DryRun:
		view.AddTxn(kv, res.Before)
	case res.Before != nil:
		kv.Add("Txn id", fmt.Sprint(res.Before.ID))
		kv.Add("Status before", res.Before.Status)
		kv.Add("Status now", "unknown (SHOW TRANSACTION did not answer; see doris-sink txn status)")
	case res.TxnID != 0:
		kv.Add("Txn id", fmt.Sprint(res.TxnID))
	}
	return kv.Render()
}
