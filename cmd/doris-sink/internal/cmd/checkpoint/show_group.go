package checkpoint

import (
	"fmt"
	"strconv"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
)

// printGroup prints the group view of `checkpoint show`: one row per
// writer slot, one per source partition.
func printGroup(io *cmdutil.IOStreams, g *jobstate.Group) error {
	state := ""
	if g.GroupState != "" {
		state = ", group state " + g.GroupState
	}
	fmt.Fprintf(io.Out, "\nWriter slots (%d, consumer group %s%s):\n", g.Slots, g.ConsumerGroup, state)
	t := cmdutil.NewTable(io, "slot", "owner", "checkpoint", "label", "committed", "next id", "announced", "partitions", "lag")
	for _, s := range g.SlotViews {
		cp, committed := "-", "-"
		if s.Checkpoint != 0 {
			cp, committed = strconv.FormatUint(s.Checkpoint, 10), strconv.FormatBool(s.Committed)
		}
		t.AddRow(s.Scope, s.OwnerText, cp, s.Label, committed, strconv.FormatUint(s.NextID, 10), strconv.Itoa(s.Announced),
			strconv.Itoa(s.Partitions), optInt(s.Lag))
	}
	if err := t.Render(); err != nil {
		return err
	}
	if len(g.Partitions) > 0 {
		fmt.Fprintf(io.Out, "\nPartitions:\n")
		t := cmdutil.NewTable(io, "partition", "slot", "owner", "checkpoint", "position", "log end", "lag")
		for _, p := range g.Partitions {
			cp := "-"
			if p.Checkpoint != 0 {
				cp = strconv.FormatUint(p.Checkpoint, 10)
			}
			t.AddRow(p.Topic+"/"+strconv.Itoa(int(p.Partition)), p.Scope, p.Owner, cp, optInt(p.Position), optInt(p.LogEnd), optInt(p.Lag))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	for _, e := range g.Errors {
		fmt.Fprintf(io.ErrOut, "warning: %s\n", e)
	}
	return nil
}

func optInt(p *int64) string {
	if p == nil {
		return "unknown"
	}
	return strconv.FormatInt(*p, 10)
}
