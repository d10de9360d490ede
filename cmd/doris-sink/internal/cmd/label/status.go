package label

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
	"github.com/doris-sink/doris-sink/doris"
	lbl "github.com/doris-sink/doris-sink/label"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// StatusOptions are the inputs of `label status`.
type StatusOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	Label      string
}

// Parsed is a doris-sink label split into its fields.
type Parsed struct {
	Job        string `json:"job"`
	TableTag   string `json:"table_tag"`
	Scope      string `json:"scope"`
	Checkpoint uint64 `json:"checkpoint"`
}

// StatusResult is the output of `label status` (stable JSON names).
type StatusResult struct {
	Label string `json:"label"`
	DB    string `json:"db"`
	// State is get_load_state's answer (UNKNOWN when Doris has no txn).
	State string `json:"state"`
	// Parsed is set when the label is a doris-sink label.
	Parsed *Parsed `json:"parsed,omitempty"`
	// Transaction is SHOW TRANSACTION's latest txn of the label.
	Transaction *view.Txn `json:"transaction,omitempty"`
	// TransactionError says why SHOW TRANSACTION gave nothing.
	TransactionError string `json:"transaction_error,omitempty"`
	// Store and Ledger are what the job's data dir knows (with -c).
	Store      []jobstate.Label `json:"store,omitempty"`
	Ledger     []ledger.Entry   `json:"ledger,omitempty"`
	StoreError string           `json:"store_error,omitempty"`
}

// NewCmdStatus returns `label status`; runF replaces Run in tests.
func NewCmdStatus(f *cmdutil.Factory, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "status <label>",
		Short: "Show a label's state in Doris and in the job's store",
		Long: `Show the state of a Stream Load label: get_load_state from the FE, the
SHOW TRANSACTION fields when the FE MySQL port is reachable, and, with -c,
what the job's checkpoint store and ledger know about it.`,
		Args: cobra.ExactArgs(1),
		Example: `  $ doris-sink label status orders-eos:demo-orders:0:42 --db demo
  $ doris-sink label status orders-eos:demo-orders:0:42 -c orders.yaml -o json`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Label, opts.Cmd = args[0], c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return RunStatus(c.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmdutil.AddDorisFlags(cmd)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunStatus looks the label up and prints it.
func RunStatus(ctx context.Context, o *StatusOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, 0)
	if err != nil {
		return err
	}
	if cfg.Doris.Database == "" {
		return cmdutil.FlagErrorf("a database is required: --db or doris.database")
	}
	client, err := o.Factory.Doris(cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	res, err := Lookup(ctx, client, cfg.Doris.Database, o.Label)
	if err != nil {
		return err
	}
	if o.ConfigFile != "" {
		addStore(ctx, res, cfg)
	}
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, res)
	}
	return printStatus(o.IO, res)
}

// Lookup asks Doris about label l in db. The FE HTTP lookup must work; a
// SHOW TRANSACTION failure is reported in the result.
func Lookup(ctx context.Context, c *doris.Client, db, l string) (*StatusResult, error) {
	res := &StatusResult{Label: l, DB: db}
	st, err := c.LoadState(ctx, db, l)
	if err != nil {
		return nil, fmt.Errorf("label %s: get_load_state: %w", l, err)
	}
	res.State = string(st)
	if p, err := lbl.Parse(l); err == nil {
		res.Parsed = &Parsed{Job: p.Prefix, TableTag: p.TableTag, Scope: p.Scope, Checkpoint: p.Checkpoint}
	}
	t, err := c.TransactionByLabel(ctx, db, l)
	switch {
	case errors.Is(err, doris.ErrTxnNotFound):
		res.TransactionError = "no transaction has this label (never used, or cleaned after label retention)"
	case err != nil:
		res.TransactionError = "SHOW TRANSACTION: " + err.Error()
	default:
		res.Transaction = view.FromTransaction(t)
	}
	return res, nil
}

func addStore(ctx context.Context, res *StatusResult, cfg *config.Config) {
	if cfg.Job.DataDir == "" {
		res.StoreError = "job.name/job.data_dir not set: no store to read"
		return
	}
	v, err := jobstate.Open(ctx, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		res.StoreError = "no checkpoint store in " + cfg.Job.DataDir
		if cfg.Job.Coordinator == config.CoordinatorKafka {
			res.StoreError = err.Error()
		}
		return
	}
	if err != nil {
		res.StoreError = err.Error()
		return
	}
	res.Store, res.Ledger = v.Find(res.Label)
}

func printStatus(io *cmdutil.IOStreams, r *StatusResult) error {
	kv := cmdutil.NewKV(io)
	kv.Add("Label", r.Label)
	kv.Add("Database", r.DB)
	kv.Add("State", r.State)
	if r.Parsed != nil {
		kv.Add("Job", r.Parsed.Job)
		kv.Add("Table tag", r.Parsed.TableTag)
		kv.Add("Scope", r.Parsed.Scope)
		kv.Add("Checkpoint", strconv.FormatUint(r.Parsed.Checkpoint, 10))
	}
	if r.Transaction != nil {
		view.AddTxn(kv, r.Transaction)
	} else {
		kv.Add("Transaction", r.TransactionError)
	}
	for _, s := range r.Store {
		note := s.Role
		if s.Committed {
			note += ", committed"
		}
		if s.Resolved != "" {
			note += ", resolved as " + s.Resolved
		}
		kv.Add("Store", fmt.Sprintf("writer slot %s checkpoint %d %s (txn %d, %s)", s.Scope, s.Checkpoint, note, s.TxnID, view.Time(s.At)))
	}
	for _, e := range r.Ledger {
		kv.Add("Ledger", fmt.Sprintf("%s %s checkpoint %d txn %d %s rows %d/%d", view.Time(e.Time), e.Event, e.Checkpoint, e.TxnID, e.State, e.RowsLoaded, e.RowsTotal))
	}
	if r.StoreError != "" {
		kv.Add("Store", r.StoreError)
	}
	return kv.Render()
}
