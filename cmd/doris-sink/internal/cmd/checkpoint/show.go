package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// ShowOptions are the inputs of `checkpoint show`.
type ShowOptions struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	History    int
}

// ShowResult is the output of `checkpoint show -o json` (stable names).
type ShowResult struct {
	Dir       string                    `json:"dir"`
	Owner     checkpoint.Owner          `json:"owner"`
	NextID    uint64                    `json:"next_id"`
	Decided   *checkpoint.Decision      `json:"decided"`
	Announced []checkpoint.Announcement `json:"announced"`
	History   []checkpoint.Decision     `json:"history"`
	Resolved  []checkpoint.Resolution   `json:"resolved"`
	// LedgerEntries counts the ledger lines; LedgerTorn notes a torn tail.
	LedgerEntries int    `json:"ledger_entries"`
	LedgerTorn    string `json:"ledger_torn,omitempty"`
	// Coordinator is job.coordinator (file or kafka); Kafka is what was
	// read from the state topic (kafka only).
	Coordinator string          `json:"coordinator"`
	Kafka       *jobstate.Kafka `json:"kafka,omitempty"`
	// Migrated is job.data_dir's migration marker when a file-coordinated
	// show reads a store imported into Kafka (stale: the job's state is in
	// the state topic), nil otherwise.
	Migrated *run.MigrationMarker `json:"migrated,omitempty"`
	// Group is the whole job (kafka only): every writer slot with its
	// owner (the consumer-group member holding it), last decision and
	// lag, and every source partition's slot, owner, position and lag.
	// The fields above are slot 0's.
	Group *jobstate.Group `json:"group,omitempty"`
}

// NewCmdShow returns `checkpoint show`; runF replaces Run in tests.
func NewCmdShow(f *cmdutil.Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "show -c <config>",
		Short: "Print a job's checkpoint store: decided, announced, positions, history",
		Long: `Print the checkpoint store of the job: the last decided checkpoint with
its source positions [start, end), the announced undecided labels, recent
history and operator resolutions. With job.coordinator file it reads the
store in job.data_dir without taking its lock; with kafka it reads the
job's state topic read-only (read_committed, no producer id: it never
fences the job) and also shows the state record, the source topic ID and a
pending operator record. It works while the job runs and after it stopped.`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink checkpoint show -c orders.yaml
  $ doris-sink checkpoint show -c orders.yaml --history 50 -o json`,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.ConfigFile == "" {
				return cmdutil.FlagErrorf("-c/--config is required: it names the job and its data_dir")
			}
			if opts.History < 0 {
				return cmdutil.FlagErrorf("--history must be ≥ 0")
			}
			opts.Cmd = c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return RunShow(c.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmd.Flags().IntVar(&opts.History, "history", 10, "how many earlier decisions to show")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunShow prints the store.
func RunShow(ctx context.Context, o *ShowOptions) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedJob)
	if err != nil {
		return err
	}
	v, err := jobstate.Open(ctx, cfg)
	if err != nil {
		return err
	}
	st := v.State
	hist := st.History
	if len(hist) > o.History {
		hist = hist[len(hist)-o.History:]
	}
	res := ShowResult{
		Dir: v.Dir, Owner: st.Owner, NextID: st.NextID, Decided: st.Decided,
		Announced: nonNil(st.Announced), History: nonNil(hist), Resolved: nonNil(st.Resolved),
		LedgerEntries: len(v.Ledger), Coordinator: coordinator(cfg), Kafka: v.Kafka,
	}
	if v.Torn != nil {
		res.LedgerTorn = v.Torn.String()
	}
	if v.Kafka != nil {
		res.Group = jobstate.ReadGroup(ctx, cfg, v)
	}
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		var me *run.MigratedError
		if err := run.CheckNotMigrated(cfg); errors.As(err, &me) {
			res.Migrated = &run.MigrationMarker{State: me.State, StateTopic: me.StateTopic, Note: me.Note}
		} else if err != nil {
			return err
		}
	}
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, res)
	}
	return printShow(o.IO, &res)
}

// coordinator returns job.coordinator, "file" when unset.
func coordinator(cfg *config.Config) string {
	if cfg.Job.Coordinator == "" {
		return config.CoordinatorFile
	}
	return cfg.Job.Coordinator
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func printShow(io *cmdutil.IOStreams, r *ShowResult) error {
	kv := cmdutil.NewKV(io)
	kv.Add("Store", r.Dir)
	if m := r.Migrated; m != nil {
		kv.Add("Migrated", fmt.Sprintf("this directory's store was imported into Kafka (%s: %s): the job's state lives in "+
			"state topic %s (job.coordinator kafka); what follows is the stale file store", run.MigratedMarker, m.State, m.StateTopic))
	}
	if k := r.Kafka; k != nil {
		kv.Add("Store", fmt.Sprintf("kafka state topic %s, record at offset %d (stable end %d)", k.StateTopic, k.Offset, k.End))
		if len(k.Source.TopicIDs) > 0 {
			var ids []string
			for _, t := range slices.Sorted(maps.Keys(k.Source.TopicIDs)) {
				ids = append(ids, t+"="+k.Source.TopicIDs[t])
			}
			kv.Add("Source topic IDs", strings.Join(ids, ", "))
		} else {
			kv.Add("Source topic ID", k.Source.TopicID)
		}
		if len(k.Source.FirstStart) > 0 {
			kv.Add("First start", string(k.Source.FirstStart))
		}
		if op := k.Operator; op != nil {
			state := "applied or superseded"
			if k.Pending {
				state = "pending: the job applies it at its next start"
			}
			kv.Add("Operator record", fmt.Sprintf("checkpoint %d --assume %s by %s at %s (offset %d): %s",
				op.Checkpoint, op.Assumed, op.By, view.Time(op.At), op.Offset, state))
		}
	}
	kv.Add("Job", r.Owner.Job)
	kv.Add("Table", r.Owner.DB+"."+r.Owner.Table)
	kv.Add("Source", r.Owner.Source)
	kv.Add("Writer", r.Owner.Writer)
	kv.Add("Next id", strconv.FormatUint(r.NextID, 10))
	if d := r.Decided; d != nil {
		state := "decided, not yet committed"
		if d.Committed {
			state = "committed " + view.Time(d.CommittedAt)
		}
		if d.Empty {
			state += " (empty)"
		}
		kv.Add("Decided", fmt.Sprintf("checkpoint %d %s", d.ID, d.Label))
		kv.Add("  txn", strconv.FormatInt(d.TxnID, 10))
		kv.Add("  state", state)
		kv.Add("  decided at", view.Time(d.DecidedAt))
		kv.Add("  start", string(d.Start))
		kv.Add("  end (restart position)", string(d.End))
		kv.Add("  load", countsText(d.Counts))
		if d.Healed > 0 {
			kv.Add("  healed", strconv.Itoa(d.Healed))
		}
	} else {
		kv.Add("Decided", "nothing yet")
	}
	kv.Add("Ledger entries", strconv.Itoa(r.LedgerEntries))
	if r.LedgerTorn != "" {
		kv.Add("Ledger torn tail", r.LedgerTorn)
	}
	if err := kv.Render(); err != nil {
		return err
	}
	section := func(title string) { fmt.Fprintf(io.Out, "\n%s\n", title) }
	if r.Group != nil {
		if err := printGroup(io, r.Group); err != nil {
			return err
		}
	}
	if d := r.Decided; d != nil && len(d.Txns) > 0 {
		section("Txns of the decided checkpoint (one per table it touched):")
		t := cmdutil.NewTable(io, "table", "label", "txn", "committed", "healed", "rows loaded")
		for _, x := range d.Txns {
			loaded := "unknown"
			if x.Counts != nil {
				loaded = strconv.FormatInt(x.Counts.RowsLoaded, 10)
			}
			t.AddRow(x.Table, x.Label, strconv.FormatInt(x.TxnID, 10), strconv.FormatBool(x.Committed),
				strconv.Itoa(x.Healed), loaded)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(r.Announced) > 0 {
		section("Announced, undecided (recovery aborts them):")
		t := cmdutil.NewTable(io, "checkpoint", "label", "announced")
		for _, a := range r.Announced {
			t.AddRow(strconv.FormatUint(a.ID, 10), a.Label, view.Time(a.At))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(r.History) > 0 {
		section("History (newest last):")
		t := cmdutil.NewTable(io, "checkpoint", "label", "txn", "committed", "decided", "rows loaded", "end")
		for _, d := range r.History {
			loaded := "unknown"
			if d.Counts != nil {
				loaded = strconv.FormatInt(d.Counts.RowsLoaded, 10)
			}
			t.AddRow(strconv.FormatUint(d.ID, 10), d.Label, strconv.FormatInt(d.TxnID, 10), strconv.FormatBool(d.Committed),
				view.Time(d.DecidedAt), loaded, string(d.End))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(r.Resolved) > 0 {
		section("Operator resolutions:")
		t := cmdutil.NewTable(io, "checkpoint", "label", "assumed", "by", "at")
		for _, x := range r.Resolved {
			t.AddRow(strconv.FormatUint(x.CheckpointID, 10), x.Label, x.Assumed, x.By, view.Time(x.At))
		}
		return t.Render()
	}
	return nil
}

// countsText renders a decision's load counters (Decision.Counts, the
// "counts" object of -o json) for humans; nil counts are unknown (a store
// written before doris-sink recorded them).
func countsText(c *checkpoint.LoadCounts) string {
	if c == nil {
		return "counts unknown (recorded before doris-sink kept them)"
	}
	s := fmt.Sprintf("%d of %d rows loaded (filtered %d, unselected %d), %d bytes, %d attempt(s)",
		c.RowsLoaded, c.RowsTotal, c.RowsFiltered, c.RowsUnselected, c.Bytes, c.Attempts)
	if c.DeadLettered > 0 {
		s += fmt.Sprintf(", %d record(s) dead-lettered", c.DeadLettered)
	}
	return s
}
