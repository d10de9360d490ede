package label

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/ledger"
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

// ListItem is one row of `label list` (stable JSON names). The embedded
// jobstate.Label is the store's view; for a label the store does not hold,
// role is empty, checkpoint and txn_id come from the ledger (or the label
// text), and at is Doris's prepare time.
type ListItem struct {
	jobstate.Label
	// FoundIn lists where the label was found: store, ledger, doris.
	FoundIn []string `json:"found_in"`
	// DorisState is the state of the label's latest txn (SHOW TRANSACTION,
	// else get_load_state), or "" with --no-doris.
	DorisState string `json:"doris_state,omitempty"`
	// DorisTxnID is the id of that txn when SHOW TRANSACTION listed it.
	DorisTxnID int64 `json:"doris_txn_id,omitempty"`
	// DorisError says why the lookup failed.
	DorisError string `json:"doris_error,omitempty"`
	// UnknownToJob is true for a label Doris holds under the job's prefix
	// that neither the store nor the ledger announced or decided: another
	// writer on the same prefix (a fencing risk, docs/design.md §3) unless its
	// state is ABORTED (then it loaded nothing; the job may have dropped it
	// as an announced label found ABORTED at recovery).
	UnknownToJob bool `json:"unknown_to_job"`
}

// NewCmdList returns `label list`; runF replaces Run in tests.
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "list -c <config>",
		Short: "List a job's labels from its store, its ledger and Doris",
		Long: `List the labels of the job's checkpoint store (the last decided checkpoint,
the earlier ones kept in its history, and the announced undecided ones) and
the labels Doris holds with the job's prefix "<job>:" (SHOW TRANSACTION WHERE
label LIKE '<job>:%'), newest first. Each row says where the label was found
(store, ledger, doris) and its state in Doris. A label Doris holds that the
store and the ledger never announced or decided is flagged: another writer
may be using the job's prefix (a fencing risk). --prefix narrows both lists;
--no-doris lists the store only.`,
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
	cmd.Flags().BoolVar(&opts.NoDoris, "no-doris", false, "list the store only; do not ask Doris")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunList lists the labels.
func RunList(ctx context.Context, o *ListOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedJob)
	if err != nil {
		return err
	}
	v, err := jobstate.Open(ctx, cfg)
	if err != nil {
		return err
	}
	job := v.State.Owner.Job
	if job == "" {
		job = cfg.Job.Name
	}
	jobPrefix := job + ":"
	store := jobstate.WithPrefix(v.Labels(), o.Prefix)
	var items []ListItem
	if o.NoDoris {
		items = merge(store, v.Ledger, nil, jobPrefix, o.Prefix)
	} else {
		client, err := o.Factory.Doris(cfg)
		if err != nil {
			return err
		}
		defer client.Close()
		items = listWithDoris(ctx, o, client, v.State.Owner.DB, store, v.Ledger, jobPrefix)
	}
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, items) // never nil: an empty list prints []
	}
	return printList(o.IO, items, jobPrefix)
}

// listWithDoris lists the job's labels in Doris, merges them with the
// store's and the ledger's, and asks get_load_state for the store labels
// SHOW TRANSACTION did not list (all of them when it failed: a Doris
// without LIKE support, or no MySQL port).
func listWithDoris(ctx context.Context, o *ListOptions, client *doris.Client, db string,
	store []jobstate.Label, entries []ledger.Entry, jobPrefix string) []ListItem {
	var txns []doris.Transaction
	if pattern, ok := dorisPattern(jobPrefix, o.Prefix); ok {
		var err error
		txns, err = client.TransactionsByLabelLike(ctx, db, pattern+"%")
		if err != nil {
			fmt.Fprintf(o.IO.ErrOut, "warning: cannot list Doris's labels %s*: %v; showing the store's labels only\n", pattern, err)
			txns = nil
		}
	}
	items := merge(store, entries, txns, jobPrefix, o.Prefix)
	for i := range items {
		if items[i].DorisState != "" {
			continue
		}
		st, err := client.LoadState(ctx, db, items[i].Label.Label)
		if err != nil {
			items[i].DorisError = err.Error()
			continue
		}
		items[i].DorisState = string(st)
	}
	return items
}

func printList(io *cmdutil.IOStreams, items []ListItem, jobPrefix string) error {
	t := cmdutil.NewTable(io, "checkpoint", "label", "found", "store", "txn", "doris", "at", "note")
	risky, unknown := 0, 0
	for _, it := range items {
		store := it.Role
		if it.Committed {
			store += ",committed"
		}
		if it.Resolved != "" {
			store += ",resolved:" + it.Resolved
		}
		state := it.DorisState
		if it.Role == jobstate.RoleAnnounced && state == string(doris.TxnUnknown) && it.DorisError == "" {
			// The running job's open checkpoint: no row written to it yet
			// (-o json keeps Doris's answer, UNKNOWN).
			state = "open"
		}
		if it.DorisError != "" {
			state = "error: " + it.DorisError
		}
		txn := ""
		switch {
		case it.TxnID != 0:
			txn = strconv.FormatInt(it.TxnID, 10)
		case it.DorisTxnID != 0:
			txn = strconv.FormatInt(it.DorisTxnID, 10)
		}
		if it.TxnID != 0 && it.DorisTxnID != 0 && it.DorisTxnID != it.TxnID {
			txn += " (doris " + strconv.FormatInt(it.DorisTxnID, 10) + ")"
		}
		note := ""
		if it.UnknownToJob {
			unknown++
			note = "NOT THIS JOB'S: ABORTED, loaded nothing"
			if it.fencingRisk() {
				risky++
				note = "NOT THIS JOB'S: another writer on this prefix? (fencing risk)"
			}
		}
		t.AddRow(fmt.Sprint(it.Checkpoint), it.Label.Label, strings.Join(it.FoundIn, ","), store, txn, state,
			view.Time(it.At), note)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if unknown > 0 {
		fmt.Fprintf(io.ErrOut, "warning: Doris holds %d label(s) with prefix %s that this job's store and ledger never announced or decided, %d not ABORTED: "+
			"another writer may be using the prefix (docs/design.md §3); look them up with `doris-sink label status <label>`\n",
			unknown, jobPrefix, risky)
	}
	return nil
}
