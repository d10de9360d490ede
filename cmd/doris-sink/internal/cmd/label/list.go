package label

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
)

// ListOptions are the inputs of `label list`.
type ListOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	Prefix     string
	NoDoris    bool
}

// ListItem is one row of `label list` (stable JSON names).
type ListItem struct {
	jobstate.Label
	// DorisState is get_load_state's answer, or "" with --no-doris.
	DorisState string `json:"doris_state,omitempty"`
	// DorisError says why the lookup failed.
	DorisError string `json:"doris_error,omitempty"`
}

// NewCmdList returns `label list`; runF replaces Run in tests.
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "list -c <config>",
		Short: "List the labels a job's store knows, with their Doris state",
		Long: `List the labels of the job's checkpoint store (the last decided checkpoint,
the earlier ones kept in its history, and the announced undecided ones),
newest first, each with its state in Doris (get_load_state).`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink label list -c orders.yaml
  $ doris-sink label list -c orders.yaml --prefix orders-eos:demo-orders:0:4 -o json`,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.ConfigFile == "" {
				return cmdutil.FlagErrorf("-c/--config is required: the labels come from the job's store")
			}
			opts.Cmd = c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return RunList(c.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmdutil.AddDorisFlags(cmd)
	cmd.Flags().StringVar(&opts.Prefix, "prefix", "", "only labels starting with this text")
	cmd.Flags().BoolVar(&opts.NoDoris, "no-doris", false, "do not ask Doris for the states")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunList lists the labels.
func RunList(ctx context.Context, o *ListOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedJob)
	if err != nil {
		return err
	}
	v, err := jobstate.Read(cfg.Job.DataDir)
	if err != nil {
		return err
	}
	labels := jobstate.WithPrefix(v.Labels(), o.Prefix)
	items := make([]ListItem, len(labels))
	for i, l := range labels {
		items[i].Label = l
	}
	if !o.NoDoris && len(items) > 0 {
		client, err := o.Factory.Doris(cfg)
		if err != nil {
			return err
		}
		defer client.Close()
		db := v.State.Owner.DB
		for i := range items {
			st, err := client.LoadState(ctx, db, items[i].Label.Label)
			if err != nil {
				items[i].DorisError = err.Error()
				continue
			}
			items[i].DorisState = string(st)
		}
	}
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, items) // never nil: an empty list prints []
	}
	t := cmdutil.NewTable(o.IO, "checkpoint", "label", "store", "txn", "doris", "at")
	for _, it := range items {
		store := it.Role
		if it.Committed {
			store += ",committed"
		}
		if it.Resolved != "" {
			store += ",resolved:" + it.Resolved
		}
		doris := it.DorisState
		if it.DorisError != "" {
			doris = "error: " + it.DorisError
		}
		txn := ""
		if it.TxnID != 0 {
			txn = strconv.FormatInt(it.TxnID, 10)
		}
		t.AddRow(fmt.Sprint(it.Checkpoint), it.Label.Label, store, txn, doris, view.Time(it.At))
	}
	return t.Render()
}
