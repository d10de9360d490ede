// Package checkpoint implements `doris-sink checkpoint show` and
// `checkpoint resolve`.
package checkpoint

import (
	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// NewCmdCheckpoint returns the `checkpoint` command group.
func NewCmdCheckpoint(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint <command>",
		Short: "Inspect a job's checkpoint store or resolve a lost label",
	}
	cmd.AddCommand(NewCmdShow(f, nil), NewCmdResolve(f, nil))
	return cmd
}
