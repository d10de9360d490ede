// Package status implements `doris-sink status`: one job's state per
// partition, joined from three sources: the checkpoint store in
// job.data_dir or, with job.coordinator kafka, the job's state topic (the
// position loaded: the last decision), Kafka (the high
// watermark, so the lag to loaded offsets) and, when the job runs, the
// process itself (GET /status on metrics.listen: state, stall reason,
// read positions).
package status

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// Options are the inputs of `doris-sink status`.
type Options struct {
	IO         *cmdutil.IOStreams
	Factory    *cmdutil.Factory
	Cmd        *cobra.Command
	ConfigFile string
	Output     string
	// Timeout bounds the whole command (Kafka and the process).
	Timeout time.Duration
}

// NewCmdStatus returns the status command; runF replaces Run in tests.
func NewCmdStatus(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "status -c <config>",
		Short: "Show a job's state, positions loaded, lag, last checkpoint and stall reason",
		Long: `Show one job, per partition: the position loaded (the end of the last
decided checkpoint, in job.data_dir or, with job.coordinator kafka, in the
job's state topic, read without fencing the job), the high watermark and the lag to the
loaded position (from Kafka), and, while the job runs, its state, its read
position and why it is stalled (asked from the running process at
metrics.listen, GET /status). When no process answers there, the state is
"not running" and the store and Kafka view is still shown.

The exit code is 0 whenever a report is printed, stalled or not: scripts
read "state" from -o json.`,
		Args: cobra.NoArgs,
		Example: `  $ doris-sink status -c orders.yaml
  $ doris-sink status -c orders.yaml -o json | jq -r .state`,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.ConfigFile == "" {
				return cmdutil.FlagErrorf("-c/--config is required: it names the job, its data_dir, topic and metrics.listen")
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
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Second, "bound on asking Kafka and the running process")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Run prints the job's status.
func Run(ctx context.Context, o *Options) error {
	cfg, err := cmdutil.LoadConfig(o.Factory, o.Cmd, o.ConfigFile, config.NeedRun)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	now := time.Now
	if o.Factory.Now != nil {
		now = o.Factory.Now
	}
	res := collect(ctx, cfg, now)
	if o.Output == cmdutil.OutputJSON {
		return cmdutil.WriteJSON(o.IO.Out, res)
	}
	return printResult(o.IO, res, now())
}
