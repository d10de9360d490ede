package reconcile

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// Options are the inputs of `doris-sink reconcile`.
type Options struct {
	IO      *cmdutil.IOStreams
	Factory *cmdutil.Factory
	// ConfigFile is -c; Output is -o.
	ConfigFile, Output string
	// Audit and Served are --audit and --served ("" : the job's
	// doris.table).
	Audit, Served string
	// Key, Version, DeleteWhen, Where, Sums, EventID and QueryTimeout are
	// the flags of the same names (Spec).
	Key                        []string
	Version, DeleteWhen, Where string
	Sums, EventID              []string
	QueryTimeout               time.Duration
	// AuditJob is --audit-job: the audit job's config file.
	AuditJob string

	loadConfig func() (*config.Config, error)
}

// NewCmdReconcile returns the reconcile command. runF replaces the run
// function in tests (nil: RunCmd).
func NewCmdReconcile(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "reconcile -c job.yaml --audit db.audit --key k --version v",
		Short: "Check the served table against the state rebuilt from an audit table",
		Long: `reconcile checks the business layer of exactly-once: the served table (--served,
default the job's doris.table) must equal the state rebuilt from an append-only
audit table (--audit, a DUPLICATE KEY table of every event): per --key, the audit
row of maximum --version, keys whose latest row matches --delete-when absent.
Rows are compared on every column the two tables share. It reports, each with a
count and the first 20 keys:
  - mismatched:      the served row differs from the audit row of maximum version;
  - missing:         a live key is not served;
  - resurrected:     a deleted key is served;
  - not-in-audit:    a served key has no audit row;
  - duplicate-key:   a key served twice (DUPLICATE KEY served tables only);
  - tied-version:    a key's maximum version is held by audit rows with different
                     values (left out of the other checks and of the sums);
  - duplicate-event: an --event-id value (e.g. partition, offset) twice in the audit;
and per --sum column the served and rebuilt totals. With --audit-job (the audit
table's own job config, whose records.metadata_columns names partition and offset
columns), it also reads that job's checkpoint store (read-only) and checks, within
the offset ranges its retained decisions cover: no (topic,) partition, offset twice
(duplicate-offset), no audit row past the last decision (beyond-evidence), and the
audit rows there equal the rows the decisions loaded (dead letters, filtered rows
and tombstones are not loaded rows, so they do not count).
The work runs in Doris as SQL (GROUP BY, JOIN), each query bounded by
--query-timeout (the query_timeout session variable). --where and --delete-when
are SQL predicates passed to Doris as written (they are yours: reconcile runs
them with your Doris account); --where bounds both tables, so it may name only
columns both have. Rows whose version is NULL are ignored by the rebuild.
It exits 0 when everything agrees, 5 on any mismatch, 1 on errors.`,
		Example: `  doris-sink reconcile -c orders.yaml --audit shop.order_audit --key order_id \
    --version op_version --delete-when "status = 'DELETED'" --sum amount
  doris-sink reconcile -c orders.yaml --audit shop.order_audit --key order_id --version op_version \
    --where "order_date >= '2024-06-01'" -o json | jq '.checks[] | select(.count > 0)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.loadConfig = func() (*config.Config, error) {
				need := config.NeedTable
				if opts.Served != "" {
					need = 0
				}
				return cmdutil.LoadConfig(f, cmd, opts.ConfigFile, need)
			}
			if runF != nil {
				return runF(opts)
			}
			return RunCmd(cmd.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	fs := cmd.Flags()
	fs.StringVar(&opts.Audit, "audit", "", "the audit table, db.table (a DUPLICATE KEY table of every event); required")
	fs.StringVar(&opts.Served, "served", "", "the served table, db.table (default: the job's doris.database.doris.table)")
	fs.StringSliceVar(&opts.Key, "key", nil, "the business key column(s), comma-separated or repeated; required")
	fs.StringVar(&opts.Version, "version", "", "the audit's version column: the row of maximum version is a key's state; required")
	fs.StringVar(&opts.DeleteWhen, "delete-when", "", "SQL predicate on an audit row meaning it deletes its key, e.g. \"status = 'DELETED'\"")
	fs.StringVar(&opts.Where, "where", "", "SQL predicate bounding both tables (passed to Doris as written)")
	fs.StringArrayVar(&opts.Sums, "sum", nil, "a column whose served and rebuilt totals are compared (repeatable)")
	fs.StringSliceVar(&opts.EventID, "event-id", nil, "audit column(s) identifying one source event (e.g. partition,offset): no value twice")
	fs.DurationVar(&opts.QueryTimeout, "query-timeout", DefaultQueryTimeout, "bound of each query (Doris query_timeout)")
	fs.StringVar(&opts.AuditJob, "audit-job", "", "the audit table's job config: link its rows to that job's decisions (records.metadata_columns partition/offset)")
	return cmd
}

// RunCmd loads the config, reconciles and prints the report; it returns a
// *cmdutil.GapsError (exit 5) when anything disagrees.
func RunCmd(ctx context.Context, opts *Options) error {
	if opts.Audit == "" || len(opts.Key) == 0 || opts.Version == "" {
		return cmdutil.FlagErrorf("--audit, --key and --version are required")
	}
	cfg, err := opts.loadConfig()
	if err != nil {
		return err
	}
	spec, err := specOf(opts, cfg)
	if err != nil {
		return err
	}
	if opts.AuditJob != "" {
		if opts.Where != "" {
			return cmdutil.FlagErrorf("--where and --audit-job together: the audit job's decisions cover the whole audit table")
		}
		acfg, err := config.Load(config.LoadOptions{File: opts.AuditJob, Environ: opts.Factory.Environ, Need: config.NeedJob | config.NeedTable})
		if err != nil {
			return fmt.Errorf("--audit-job %s: %w", opts.AuditJob, err)
		}
		if spec.Evidence, err = ReadEvidence(ctx, acfg, spec.Audit); err != nil {
			return err
		}
		spec.AuditJob = acfg.Job.Name
	}
	c, err := opts.Factory.Doris(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	rep, err := Run(ctx, c, spec)
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
	if n := rep.Mismatches(); n > 0 {
		return &cmdutil.GapsError{Gaps: n}
	}
	return nil
}

func specOf(opts *Options, cfg *config.Config) (Spec, error) {
	spec := Spec{Key: opts.Key, Version: opts.Version, DeleteWhen: opts.DeleteWhen, Where: opts.Where,
		Sums: opts.Sums, EventID: opts.EventID, QueryTimeout: opts.QueryTimeout}
	var err error
	if spec.Audit, err = ParseTable(opts.Audit, cfg.Doris.Database); err != nil {
		return spec, cmdutil.FlagErrorf("--audit: %v", err)
	}
	served := opts.Served
	if served == "" {
		served = cfg.Doris.Database + "." + cfg.Doris.Table
	}
	if spec.Served, err = ParseTable(served, cfg.Doris.Database); err != nil {
		return spec, cmdutil.FlagErrorf("--served: %v", err)
	}
	if spec.Audit == spec.Served {
		return spec, cmdutil.FlagErrorf("--audit and --served are both %s", spec.Audit)
	}
	return spec, nil
}

// Print writes the checks as a table, the sums, the first keys of each
// finding and a summary.
func Print(io *cmdutil.IOStreams, rep *Report) error {
	t := cmdutil.NewTable(io, "check", "count", "status", "first keys")
	for _, c := range rep.Checks {
		status := "ok"
		switch {
		case c.Skipped != "":
			status = "skipped: " + c.Skipped
		case c.Count > 0:
			status = "MISMATCH"
		}
		t.AddRow(c.Kind, fmt.Sprint(c.Count), status, keysText(c.Keys, 5))
	}
	for _, s := range rep.Sums {
		status := "ok"
		if !s.Equal {
			status = "MISMATCH"
		}
		t.AddRow("sum("+s.Column+")", "", status, fmt.Sprintf("served %s, rebuilt %s", orNone(s.Served), orNone(s.Rebuilt)))
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, c := range rep.Checks {
		if c.Count > 0 {
			fmt.Fprintln(io.ErrOut, cmdutil.TerminalSafe(fmt.Sprintf("%s: %d key(s) (%s), first %d: %s",
				c.Kind, c.Count, strings.Join(c.Columns, ", "), len(c.Keys), keysText(c.Keys, SampleKeys))))
		}
	}
	if l := rep.AuditLink; l != nil {
		line := fmt.Sprintf("audit job %s: %d decisions cover %s; %d audit rows there", l.Job, l.Decisions, strings.Join(l.Ranges, ", "), l.Rows)
		switch {
		case l.EvidenceRows < 0:
			line += " (not compared: " + l.Note + ")"
		case l.Equal:
			line += fmt.Sprintf(" = %d rows loaded", l.EvidenceRows)
		default:
			line += ": MISMATCH: " + l.Note
		}
		fmt.Fprintln(io.ErrOut, cmdutil.TerminalSafe(line))
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(io.ErrOut, cmdutil.TerminalSafe("note: "+n))
	}
	fmt.Fprintln(io.ErrOut, cmdutil.TerminalSafe(fmt.Sprintf(
		"%s (%s KEY) vs %s rebuilt by max(%s) per %s: %d served rows, %d live and %d deleted keys rebuilt, compared on %s; %d mismatch(es)",
		rep.Served, rep.ServedModel, rep.Audit, rep.Version, strings.Join(rep.Key, ", "), rep.ServedRows, rep.LiveKeys,
		rep.DeletedKeys, strings.Join(rep.Compared, ", "), rep.Mismatches())))
	return nil
}

func keysText(keys [][]string, max int) string {
	var out []string
	for i, k := range keys {
		if i == max {
			out = append(out, "…")
			break
		}
		if len(k) == 1 {
			out = append(out, k[0])
		} else {
			out = append(out, "("+strings.Join(k, ", ")+")")
		}
	}
	return strings.Join(out, " ")
}

func orNone(s string) string {
	if s == "" {
		return "NULL"
	}
	return s
}
