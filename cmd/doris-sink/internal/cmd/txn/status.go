package txn

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
	"github.com/doris-sink/doris-sink/doris"
)

// StatusOptions are the inputs of `txn status`.
type StatusOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	LabelFlag  string
	Target     Target
}

// NewCmdStatus returns `txn status`; runF replaces Run in tests.
func NewCmdStatus(f *cmdutil.Factory, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "status [<txn-id> | --label <label>]",
		Short: "Show a transaction (SHOW TRANSACTION)",
		Args:  cobra.MaximumNArgs(1),
		Example: `  $ doris-sink txn status 1001 --db demo
  $ doris-sink txn status --label orders-eos:demo-orders:0:42 --db demo -o json`,
		RunE: func(c *cobra.Command, args []string) error {
			t, err := parseTarget(args, opts.LabelFlag)
			if err != nil {
				return err
			}
			opts.Target, opts.Cmd = t, c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return RunStatus(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.LabelFlag, "label", "", "the transaction's label instead of its id")
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmdutil.AddDorisFlags(cmd)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunStatus prints the transaction.
func RunStatus(ctx context.Context, o *StatusOptions) error {
	client, db, err := connect(o.Factory, o.Cmd, o.ConfigFile)
	if err != nil {
		return err
	}
	defer client.Close()
	t, err := lookup(ctx, client, db, o.Target)
	if err != nil {
		return err
	}
	v := view.FromTransaction(t)
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, v)
	}
	kv := cmdutil.NewKV(o.IO)
	kv.Add("Label", v.Label)
	kv.Add("Database", db)
	view.AddTxn(kv, v)
	return kv.Render()
}

func lookup(ctx context.Context, c *doris.Client, db string, t Target) (*doris.Transaction, error) {
	var (
		tx  *doris.Transaction
		err error
	)
	if t.Label != "" {
		tx, err = c.TransactionByLabel(ctx, db, t.Label)
	} else {
		tx, err = c.TransactionByID(ctx, db, t.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("%s in db %s: %w", t, db, err)
	}
	return tx, nil
}

func connect(f *cmdutil.Factory, cmd *cobra.Command, file string) (*doris.Client, string, error) {
	cfg, err := cmdutil.LoadConfig(f, cmd, file, 0)
	if err != nil {
		return nil, "", err
	}
	return connectCfg(f, cfg)
}

func connectCfg(f *cmdutil.Factory, cfg *config.Config) (*doris.Client, string, error) {
	if cfg.Doris.Database == "" {
		return nil, "", cmdutil.FlagErrorf("a database is required: --db or doris.database")
	}
	c, err := f.Doris(cfg)
	if err != nil {
		return nil, "", err
	}
	return c, cfg.Doris.Database, nil
}
