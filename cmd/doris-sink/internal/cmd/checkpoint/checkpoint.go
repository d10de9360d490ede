// Package checkpoint implements `doris-sink checkpoint show`,
// `checkpoint resolve`, `checkpoint rebase` and `checkpoint reslot`.
package checkpoint

import (
	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// NewCmdCheckpoint returns the `checkpoint` command group.
func NewCmdCheckpoint(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint <command>",
		Short: "Inspect a job's checkpoint store, resolve a lost label, or rebase its positions",
	}
	cmd.AddCommand(NewCmdShow(f, nil), NewCmdResolve(f, nil), NewCmdRebase(f, nil), NewCmdReslot(f, nil))
	return cmd
}
