package verify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
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
	// Checks are --table-count and --linger-margin.
	Checks Checks

	loadConfig func() (*config.Config, error)
}

// NewCmdVerify returns the verify command. runF replaces the run function
// in tests (nil: Run).
func NewCmdVerify(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "verify -c config.yaml",
		Short: "Reconcile the evidence ledger with Doris and Kafka",
		Long: `verify reads the evidence ledger in job.data_dir and the checkpoint store (in
job.data_dir, or the Kafka state topic read-only with job.coordinator kafka) and checks
(in group mode, job.slots ≥ 2, every writer slot's decisions against its own ledger in
job.data_dir/slot-<j>; a slot whose ledger is on another member's machine is reported):
  - Doris: every decided label is VISIBLE/COMMITTED, under the txn id the ledger names;
  - Kafka: the offset ranges of consecutive checkpoints are contiguous per partition
    (no gap, no overlap) from the first checkpoint, and end at or below the high watermark;
  - rows: each load has one row per offset, except offsets the ledger counts as
    dead-lettered; otherwise the range is read from Kafka (read_committed) and
    tombstones (a Debezium envelope: records.format debezium, or records.envelope
    debezium), transaction markers and offsets Kafka no longer
    holds (compacted, aborted transactions) are accounted for; a record Kafka
    holds without a row, or a row beyond the records, is a gap;
  - lingering transactions: no PREPARE/PRECOMMITTED txn with the job's label prefix
    "<job>:" is older than delivery.checkpoint_interval + --linger-margin;
  - table count (--table-count, on by default): a DUPLICATE KEY table's COUNT(*)
    equals the rows the committed checkpoints loaded. It assumes the job is the
    table's only writer: pass --table-count=false otherwise. UNIQUE and AGGREGATE
    tables are not compared for equality (merging by key lowers their counts),
    but a count above the rows every decided checkpoint loaded is a gap.
    With job.coordinator kafka the evidence is the job's evidence topic
    (any machine, no data dir needed; local ledgers only for checkpoints
    decided before it existed); a running job's count is settled between two
    evidence reads; --since bounds what is re-read.
It exits 0 when everything reconciles, 5 when a gap is found (offsets skipped,
loaded twice, a decided checkpoint missing in Doris, a lingering txn, or a
table count that differs), 1 on other mismatches.`,
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
	opts.Checks = DefaultChecks()
	cmd.Flags().BoolVar(&opts.Checks.TableCount, "table-count", opts.Checks.TableCount,
		"compare a DUPLICATE KEY table's COUNT(*) with the ledger's loaded rows (the job must be the table's only writer)")
	cmd.Flags().Int64Var(&opts.Checks.Since, "since", 0,
		"read the evidence topic from this offset (a previous report's evidence end); the table count is then not compared")
	cmd.Flags().DurationVar(&opts.Checks.LingerMargin, "linger-margin", opts.Checks.LingerMargin,
		"a PREPARE/PRECOMMITTED txn of the job older than checkpoint_interval + this is a gap")
	return cmd
}

// Run loads the config, reconciles and prints the report. It returns the
// report's error (a *cmdutil.GapsError when a gap was found).
func Run(ctx context.Context, opts *Options) error {
	cfg, err := opts.loadConfig()
	if err != nil {
		return err
	}
	rep, err := VerifyConfigChecks(ctx, opts.Factory, cfg, opts.SkipDoris, opts.SkipKafka, opts.Checks)
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

// Checks are verify's optional Doris checks.
type Checks struct {
	// TableCount compares a DUPLICATE KEY table's COUNT(*) with the
	// ledger (--table-count).
	TableCount bool
	// LingerMargin is added to delivery.checkpoint_interval to flag
	// lingering txns (--linger-margin); <= 0 skips that check.
	LingerMargin time.Duration
	// Since is the evidence topic offset verify starts reading at
	// (--since; 0: the whole topic): a later run passes the previous
	// report's evidence end to re-read only what is new. Contiguity is
	// then proven from there on and the table count is not compared.
	Since int64
}

// DefaultChecks turns the table count on and uses DefaultLingerMargin.
func DefaultChecks() Checks { return Checks{TableCount: true, LingerMargin: DefaultLingerMargin} }

// VerifyConfig is VerifyConfigChecks with DefaultChecks.
func VerifyConfig(ctx context.Context, f *cmdutil.Factory, cfg *config.Config, skipDoris, skipKafka bool) (*Report, error) {
	return VerifyConfigChecks(ctx, f, cfg, skipDoris, skipKafka, DefaultChecks())
}

// VerifyConfigChecks reconciles the job of cfg: its ledger in
// job.data_dir and its store (job.data_dir, or the Kafka state topic with
// job.coordinator kafka), Doris and Kafka as configured (skipped when asked). An
// unreadable ledger is an error; lookup failures are findings.
func VerifyConfigChecks(ctx context.Context, f *cmdutil.Factory, cfg *config.Config, skipDoris, skipKafka bool, checks Checks) (*Report, error) {
	in := Input{Job: cfg.Job.Name, DB: cfg.Doris.Database, Table: cfg.Doris.Table,
		TableCount: checks.TableCount, Now: f.Now, SkipsTombstones: skipsTombstones(cfg)}
	if checks.LingerMargin > 0 {
		in.LingerAfter = cfg.Delivery.CheckpointInterval + checks.LingerMargin
	}
	v, err := readState(ctx, cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("verify job %s: %w", cfg.Job.Name, err)
	default:
		in.State = v.State
	}
	var missing []string
	var ev *evidenceInputs
	switch {
	case cfg.Job.Coordinator == config.CoordinatorKafka && v != nil:
		// The evidence topic (read after the state, so it holds at least
		// every decision the state names), merged with the local ledgers
		// of checkpoints decided before it existed.
		if ev, err = readEvidenceInputs(ctx, cfg, v, checks.Since); err != nil {
			return nil, err
		}
		if v.SlotCount >= 2 {
			in.Slots = ev.slots
		} else if len(ev.slots) == 1 {
			in.Entries, in.Torn = ev.slots[0].Entries, ev.slots[0].Torn
		}
		missing = ev.missing
		in.Incomplete = ev.incomplete
		in.Baseline = ev.baseline
		in.Bounded = checks.Since > 0
		in.Reread = func(ctx context.Context) ([]*record, error) {
			again, err := readEvidenceInputs(ctx, cfg, v, checks.Since)
			if err != nil {
				return nil, err
			}
			var recs []*record
			for _, s := range again.slots {
				recs = append(recs, fold(s.Entries)...)
			}
			return recs, nil
		}
	case v != nil && v.SlotCount >= 2:
		// Group mode: each slot's decisions against its own ledger.
		if in.Slots, missing, err = slotInputs(cfg, v); err != nil {
			return nil, err
		}
	default:
		entries, torn, err := ledger.ReadFile(cfg.Job.DataDir)
		if err != nil {
			return nil, fmt.Errorf("verify job %s: %w", cfg.Job.Name, err)
		}
		in.Entries, in.Torn = entries, torn
	}
	if !skipDoris {
		c, err := f.Doris(cfg)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		in.Doris = c
	}
	if !skipKafka && (len(cfg.Kafka.SourceTopics()) > 0 || cfg.Kafka.TopicRegex != "") {
		k, err := newKafka(cfg)
		if err != nil {
			return nil, err
		}
		defer k.Close()
		in.Kafka = k
	}
	rep := Reconcile(ctx, in)
	for _, m := range missing {
		msg := fmt.Sprintf("writer slot %s: no ledger in %s: its evidence is in the data_dir of the member that ran it (run verify there)",
			m, jobstate.SlotDataDir(cfg.Job.DataDir, slotNum(m), v.SlotCount))
		if ev != nil {
			msg = fmt.Sprintf("writer slot %s decided checkpoints before it wrote the evidence topic, and their local ledger is not in %s: "+
				"those checkpoints are not verified here (run verify where that member's job.data_dir is)",
				m, jobstate.SlotDataDir(cfg.Job.DataDir, slotNum(m), max(v.SlotCount, 1)))
		}
		rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Scope: m, Message: msg})
	}
	if ev != nil && ev.retention != "" {
		rep.add(Finding{Severity: SeverityWarning, Kind: KindUnverifiable, Message: ev.retention})
	}
	if ev != nil {
		rep.Sources = ev.sources
		if ev.log != nil {
			rep.Evidence = &EvidenceRead{Topic: ev.log.Topic, LogStart: ev.log.LogStart, Start: ev.log.Start, End: ev.log.End,
				Records: ev.log.Records}
			checkTopicIDs(ctx, in.Kafka, ev.log, rep)
		}
	}
	return rep, nil
}

// readState reads the job's checkpoint state where job.coordinator keeps
// it: the store in job.data_dir, or the Kafka state topic, every writer
// slot (read-only, never fencing the running job; jobstate.Open).
func readState(ctx context.Context, cfg *config.Config) (*jobstate.View, error) {
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		st, err := checkpoint.ReadFile(cfg.Job.DataDir)
		if err != nil {
			return nil, err
		}
		return &jobstate.View{Dir: cfg.Job.DataDir, State: st}, nil
	}
	return jobstate.Open(ctx, cfg)
}

// slotInputs returns every active writer slot's state and local ledger
// (jobstate.SlotDataDir), and the slots with no ledger here.
func slotInputs(cfg *config.Config, v *jobstate.View) ([]SlotInput, []string, error) {
	var out []SlotInput
	var missing []string
	for j := range v.SlotCount {
		scope := coordlog.SlotScope(j)
		in := SlotInput{Scope: scope}
		if s := v.SlotByNumber(j); s != nil {
			in.State = s.State
		}
		dir := jobstate.SlotDataDir(cfg.Job.DataDir, j, v.SlotCount)
		entries, torn, err := ledger.ReadFile(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, scope)
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("verify job %s: writer slot %s: %w", cfg.Job.Name, scope, err)
		}
		in.Entries, in.Torn = entries, torn
		out = append(out, in)
	}
	return out, missing, nil
}

func slotNum(scope string) int {
	n, _ := strconv.Atoi(scope)
	return n
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
	for _, c := range rep.Checkpoints {
		if c.Accounted != nil {
			fmt.Fprintf(io.ErrOut, "checkpoint %d: %d offsets = %d rows + %s\n", c.ID, c.Offsets, c.RowsTotal, c.Accounted)
		}
	}
	for _, s := range rep.Sources {
		fmt.Fprintln(io.ErrOut, cmdutil.TerminalSafe("evidence: "+s.String()))
	}
	if e := rep.Evidence; e != nil {
		fmt.Fprintf(io.ErrOut, "evidence: %s offsets [%d, %d) read (log start %d; pass --since %d to read only what is newer)\n",
			cmdutil.TerminalSafe(e.Topic), e.Start, e.End, e.LogStart, e.End)
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(io.ErrOut, cmdutil.TerminalSafe(f.String()))
	}
	if tc := rep.TableCount; tc != nil {
		line := "table count: " + tc.Status
		if tc.Status == TableCountOK {
			line += fmt.Sprintf(" (%d rows, as the evidence loaded)", tc.Rows)
		}
		if tc.Note != "" {
			line += ": " + tc.Note
		}
		fmt.Fprintln(io.ErrOut, cmdutil.TerminalSafe(line))
	}
	fmt.Fprintf(io.ErrOut, "%s %s: %d checkpoints, %d offsets, %d rows loaded; %d gap(s), %d error(s), %d warning(s)\n",
		rep.Job, rep.Table, len(rep.Checkpoints), rep.Offsets, rep.RowsLoaded,
		rep.Count(SeverityGap), rep.Count(SeverityError), rep.Count(SeverityWarning))
	return nil
}
