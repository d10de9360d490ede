// Package check implements `doris-sink check`: it reaches Doris and Kafka
// with a job's configuration and explains what the chosen delivery mode
// means for the target table, line by line (OK, WARN, FAIL), exiting
// non-zero when anything FAILs.
package check

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// Statuses of a check line.
const (
	OK   = "OK"
	Warn = "WARN"
	Fail = "FAIL"
)

// Line is one check result (stable JSON names).
type Line struct {
	Status string `json:"status"`
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

// Report is the output of `check -o json`.
type Report struct {
	Job    string `json:"job"`
	Lines  []Line `json:"checks"`
	Failed int    `json:"failed"`
	Warned int    `json:"warned"`
}

func (r *Report) add(status, check, format string, a ...any) {
	r.Lines = append(r.Lines, Line{Status: status, Check: check, Detail: fmt.Sprintf(format, a...)})
	switch status {
	case Fail:
		r.Failed++
	case Warn:
		r.Warned++
	}
}

// Options are the inputs of `check`.
type Options struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	Timeout    time.Duration
	SkipKafka  bool
	// GoVersion is the toolchain that built the binary (runtime.Version;
	// tests set another).
	GoVersion string
}

// NewCmdCheck returns the check command; runF replaces Run in tests.
func NewCmdCheck(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f, GoVersion: runtime.Version()}
	cmd := &cobra.Command{
		Use:   "check -c <config>",
		Short: "Check a job's config against Doris and Kafka before running it",
		Long: `Check a job's configuration against the real systems, one line per check
(OK, WARN or FAIL with the reason):

  - Doris FE HTTP reachable, credentials accepted, database exists
  - FE MySQL reachable, table exists; its model and what the delivery
    mode means for it (double counting, late events, deletes)
  - label prefix room; Doris clocks (precommit timeout, label retention,
    label count, running-txn cap) against the checkpoint interval
  - credentials that cross the network in plaintext (MySQL without TLS,
    http endpoints off loopback, doris.redirect_allow_* and
    doris.mysql_allow_insecure_auth): WARN
  - the checkpoint store belongs to this job
  - Kafka brokers reachable, topic exists
  - the binary was built with the tested Go toolchain (WARN when older)

It exits 4 when any check FAILs.`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink check -c orders.yaml
  $ doris-sink check -c orders.yaml -o json | jq '.checks[] | select(.status != "OK")'`,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.ConfigFile == "" {
				return cmdutil.FlagErrorf("-c/--config is required")
			}
			if opts.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive")
			}
			opts.Cmd = c
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return Run(c.Context(), opts)
		},
	}
	cmdutil.AddConfigFlag(cmd, &opts.ConfigFile)
	cmdutil.AddDorisFlags(cmd)
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Second, "bound on each system's checks")
	cmd.Flags().BoolVar(&opts.SkipKafka, "skip-kafka", false, "do not check Kafka")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Run runs every check and prints the report.
func Run(ctx context.Context, o *Options) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedRun)
	if err != nil {
		return err
	}
	r := &Report{Job: cfg.Job.Name}
	r.add(OK, "config", "%s valid: job %s, %s, %s.%s ← topic %s", o.ConfigFile, cfg.Job.Name, cfg.Delivery.Guarantee, cfg.Doris.Database, cfg.Doris.Table, cfg.Kafka.DescribeTopics())
	checkLabels(r, cfg)
	checkToolchain(r, o.GoVersion)
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	checkDoris(dctx, r, o.Factory, cfg)
	cancel()
	if o.SkipKafka && cfg.Job.Coordinator == config.CoordinatorKafka {
		r.add(Warn, "store", "not checked: job.coordinator kafka keeps it in the state topic and --skip-kafka was given")
	} else {
		sctx, cancel := context.WithTimeout(ctx, o.Timeout)
		checkStore(sctx, r, cfg)
		cancel()
	}
	rctx, cancel := context.WithTimeout(ctx, o.Timeout)
	checkRegistry(rctx, r, cfg)
	cancel()
	if !o.SkipKafka {
		kctx, cancel := context.WithTimeout(ctx, o.Timeout)
		checkKafka(kctx, r, cfg)
		cancel()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := print(o, r); err != nil {
		return err
	}
	if r.Failed > 0 {
		return &cmdutil.CheckFailedError{Failed: r.Failed}
	}
	return nil
}

func print(o *Options, r *Report) error {
	if o.Output == cmdutil.OutputJSON {
		if r.Lines == nil {
			r.Lines = []Line{}
		}
		return cmdutil.WriteJSON(o.IO.Out, r)
	}
	t := cmdutil.NewTable(o.IO, "status", "check", "detail")
	for _, l := range r.Lines {
		t.AddRow(l.Status, l.Check, l.Detail)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if o.IO.IsTTY {
		_, err := fmt.Fprintf(o.IO.Out, "\n%d failed, %d warnings\n", r.Failed, r.Warned)
		return err
	}
	return nil
}

// checkToolchain warns when the binary was built with an older Go than the
// tested one (GOTOOLCHAIN=local with an older Go, a distro's Go build).
func checkToolchain(r *Report, built string) {
	if built == "" {
		built = runtime.Version()
	}
	if w := cmdutil.ToolchainWarning(built); w != "" {
		r.add(Warn, "toolchain", "%s", w)
		return
	}
	r.add(OK, "toolchain", "built with %s (tested: %s)", built, cmdutil.TestedGo)
}
