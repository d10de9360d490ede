// Package label implements `doris-sink label status` and `label list`.
package label

import (
	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// NewCmdLabel returns the `label` command group.
func NewCmdLabel(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "label <command>",
		Short: "Inspect Stream Load labels in Doris and in a job's store",
	}
	cmd.AddCommand(NewCmdStatus(f, nil), NewCmdList(f, nil))
	return cmd
}
