// Package root assembles the doris-sink command tree and maps the error a
// command returns to an exit code and a message (Main).
package root

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/check"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/checkpoint"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/label"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/load"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/reconcile"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/run"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/status"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/txn"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/verify"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmd/version"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
)

// NewCmdRoot returns the doris-sink command with every subcommand. To add
// one, add its NewCmdX(f, nil) to the AddCommand list (a command that
// embeds the emulator or kfake: to sandboxCommands).
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doris-sink <command>",
		Short: "Load streaming data into Apache Doris exactly once",
		Long: `doris-sink loads Kafka records into Apache Doris exactly once with Stream Load
two-phase commit, and operates the jobs that do it: inspect and resolve
labels, transactions and checkpoints, and check a configuration against
Doris and Kafka before running it.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.FlagErrorf("unknown command %q for %q", args[0], c.CommandPath())
			}
			return c.Help()
		},
	}
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })

	cmd.AddCommand(
		run.NewCmdRun(f, nil),
		verify.NewCmdVerify(f, nil),
		reconcile.NewCmdReconcile(f, nil),
		version.NewCmdVersion(f, nil),
		check.NewCmdCheck(f, nil),
		label.NewCmdLabel(f),
		txn.NewCmdTxn(f),
		checkpoint.NewCmdCheckpoint(f),
		status.NewCmdStatus(f, nil),
		load.NewCmdLoad(f, nil),
	)
	cmd.AddCommand(sandboxCommands(f)...)
	wrapArgs(cmd)
	return cmd
}

// wrapArgs makes argument-count errors usage errors everywhere.
func wrapArgs(c *cobra.Command) {
	if orig := c.Args; orig != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := orig(cmd, args); err != nil {
				var fe *cmdutil.FlagError
				if errors.As(err, &fe) {
					return err
				}
				return &cmdutil.FlagError{Err: err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

// Main runs the command line args and returns the exit code: it prints the
// error, usage for a *cmdutil.FlagError, and a hint when there is one.
func Main(ctx context.Context, args []string, f *cmdutil.Factory) int {
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	sub, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code := cmdutil.ExitCode(err)
	if code == cmdutil.ExitInterrupted {
		fmt.Fprintln(f.IO.ErrOut, "interrupted")
		return code
	}
	fmt.Fprintln(f.IO.ErrOut, "error:", cmdutil.TerminalSafe(doris.Redact(err.Error())))
	var fe *cmdutil.FlagError
	if errors.As(err, &fe) && sub != nil {
		fmt.Fprintln(f.IO.ErrOut)
		fmt.Fprint(f.IO.ErrOut, sub.UsageString())
	}
	if h := cmdutil.Hint(err); h != "" {
		fmt.Fprintln(f.IO.ErrOut, "hint:", cmdutil.TerminalSafe(h))
	}
	return code
}
