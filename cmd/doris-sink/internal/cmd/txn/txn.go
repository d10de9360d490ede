// Package txn implements `doris-sink txn status|commit|abort`.
package txn

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// NewCmdTxn returns the `txn` command group.
func NewCmdTxn(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "txn <command>",
		Short: "Inspect, commit or abort a Doris Stream Load transaction",
	}
	cmd.AddCommand(
		NewCmdStatus(f, nil),
		NewCmdDecide(f, Commit, nil),
		NewCmdDecide(f, Abort, nil),
	)
	return cmd
}

// Target names a transaction by id or by label.
type Target struct {
	ID    int64
	Label string
}

// parseTarget reads "ID" or --label L: exactly one of them.
func parseTarget(args []string, label string) (Target, error) {
	switch {
	case len(args) == 1 && label != "":
		return Target{}, cmdutil.FlagErrorf("give a txn id or --label, not both")
	case len(args) == 1:
		id, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil || id <= 0 {
			return Target{}, cmdutil.FlagErrorf("txn id %q: want a positive integer", args[0])
		}
		return Target{ID: id}, nil
	case label != "":
		return Target{Label: label}, nil
	}
	return Target{}, cmdutil.FlagErrorf("give a txn id or --label")
}

// String describes the target.
func (t Target) String() string {
	if t.Label != "" {
		return "label " + t.Label
	}
	return "txn " + strconv.FormatInt(t.ID, 10)
}
