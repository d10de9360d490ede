package status

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/view"
)

// printResult writes r as key/value lines and a partition table (aligned
// on a terminal, tab-separated when piped).
func printResult(io *cmdutil.IOStreams, r *Result, now time.Time) error {
	kv := cmdutil.NewKV(io)
	kv.Add("Job", fmt.Sprintf("%s (%s → %s)", r.Job, r.Topic, r.Table))
	kv.Add("State", stateText(r))
	kv.Add("Process", processText(&r.Process))
	if r.Membership != nil {
		kv.Add("Group membership", membershipText(r.Membership))
	}
	kv.Add("Last checkpoint", checkpointText(r.LastCheckpoint, r.Store, now))
	lag := "unknown"
	if r.Lag != nil {
		lag = strconv.FormatInt(*r.Lag, 10) + " records"
	}
	kv.Add("Lag (loaded)", lag)
	if r.Store.StateTopic != "" && r.Store.Offset != nil {
		kv.Add("Store", fmt.Sprintf("kafka state topic %s (offset %d)", r.Store.StateTopic, *r.Store.Offset))
	}
	if r.Store.Error != "" {
		kv.Add("Store error", r.Store.Error)
	}
	if r.KafkaError != "" {
		kv.Add("Kafka error", r.KafkaError)
	}
	if err := kv.Render(); err != nil {
		return err
	}
	if len(r.Tables) > 1 {
		fmt.Fprintln(io.Out)
		t := cmdutil.NewTable(io, "table", "label", "txn", "committed", "rows loaded")
		for _, ts := range r.Tables {
			rows := "unknown"
			if ts.RowsLoaded != nil {
				rows = strconv.FormatInt(*ts.RowsLoaded, 10)
			}
			t.AddRow(ts.Table, ts.Label, strconv.FormatInt(ts.TxnID, 10), strconv.FormatBool(ts.Committed), rows)
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	group := r.Group != nil && r.Group.Slots >= 2
	if group {
		if err := printSlots(io, r); err != nil {
			return err
		}
	}
	if len(r.Partitions) == 0 {
		return nil
	}
	fmt.Fprintln(io.Out)
	cols := []string{"partition", "loaded", "read", "high watermark", "lag"}
	if group {
		cols = append(cols, "slot", "owner")
	}
	t := cmdutil.NewTable(io, cols...)
	several := false
	for _, p := range r.Partitions {
		several = several || p.Topic != r.Partitions[0].Topic
	}
	for _, p := range r.Partitions {
		name := strconv.Itoa(int(p.Partition))
		if several {
			name = p.Topic + "/" + name // a job reading several topics
		}
		row := []string{name, offset(p.Loaded), offset(p.Read), offset(p.HighWatermark), offset(p.Lag)}
		if group {
			slot := "-"
			if p.Slot != nil {
				slot = strconv.Itoa(*p.Slot)
			}
			row = append(row, slot, p.Owner)
		}
		t.AddRow(row...)
	}
	return t.Render()
}

// printSlots writes the writer slots of a group-mode job: owner, last
// decision, partitions and lag.
func printSlots(io *cmdutil.IOStreams, r *Result) error {
	g := r.Group
	fmt.Fprintf(io.Out, "\nWriter slots (%d) of consumer group %s", g.Slots, g.ConsumerGroup)
	if g.GroupState != "" {
		fmt.Fprintf(io.Out, " (%s, %d member(s))", g.GroupState, len(g.Members))
	}
	fmt.Fprintln(io.Out, ":")
	// The state of a slot is known for the slots of the member asked at
	// metrics.listen.
	state := map[int]string{}
	for _, s := range r.Process.Slots {
		state[s.Slot] = "building"
		if j := s.Job; j != nil {
			state[s.Slot] = j.State
			if j.Stall != nil {
				state[s.Slot] = "stalled " + seconds(j.Stall.Seconds) + ": " + j.Stall.Reason
			}
		}
	}
	t := cmdutil.NewTable(io, "slot", "owner", "checkpoint", "committed", "partitions", "lag", "state")
	for _, s := range g.SlotViews {
		cp, committed := "-", "-"
		if s.Checkpoint != 0 {
			cp, committed = strconv.FormatUint(s.Checkpoint, 10), strconv.FormatBool(s.Committed)
		}
		st := cmp.Or(state[s.Slot], "-")
		t.AddRow(s.Scope, s.OwnerText, cp, committed, strconv.Itoa(s.Partitions), offset(s.Lag), st)
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, e := range g.Errors {
		fmt.Fprintf(io.ErrOut, "warning: %s\n", e)
	}
	return nil
}

func stateText(r *Result) string {
	s := r.Stall
	if s == nil {
		if g := r.Membership; r.State == StateRebalancing && g != nil && g.RebalancingSince != nil {
			return fmt.Sprintf("%s for %s (since %s)", StateRebalancing, seconds(g.RebalancingSeconds), view.Time(*g.RebalancingSince))
		}
		return r.State
	}
	kind := "stalled"
	if s.Fatal {
		kind = "stalled (fatal: stopping)"
	}
	return fmt.Sprintf("%s for %s since %s: %s", kind, seconds(s.Seconds), view.Time(s.Since), s.Reason)
}

// membershipText is a group-mode member's membership: in the group, or
// rebalancing for how long and why.
func membershipText(g *metrics.MembershipStatus) string {
	if g.RebalancingSince == nil {
		return fmt.Sprintf("in consumer group %s, generation %d, slots %v", g.Group, g.Generation, g.Slots)
	}
	s := fmt.Sprintf("rebalancing: out of consumer group %s for %s since %s", g.Group, seconds(g.RebalancingSeconds),
		view.Time(*g.RebalancingSince))
	if g.SessionFailures > 0 {
		s += fmt.Sprintf(" (%d failed group session(s); last: %s)", g.SessionFailures, g.LastError)
	}
	return s
}

func processText(p *Process) string {
	if p.Running && p.Generation != nil {
		owned := []string{}
		for _, s := range p.Slots {
			st := "building"
			if s.Job != nil {
				st = s.Job.State
			}
			owned = append(owned, fmt.Sprintf("%d (%s)", s.Slot, st))
		}
		return fmt.Sprintf("pid %d on %s, started %s; group member %s generation %d owning slot(s) %s", p.PID, p.Addr,
			view.Time(p.StartedAt), p.MemberID, *p.Generation, strings.Join(owned, ", "))
	}
	if p.Running {
		return fmt.Sprintf("pid %d on %s, started %s", p.PID, p.Addr, view.Time(p.StartedAt))
	}
	return "not answering: " + p.Detail
}

func checkpointText(c *metrics.CheckpointStatus, st Store, now time.Time) string {
	if c == nil {
		if !st.Found && st.StateTopic != "" {
			return "none (no state in Kafka state topic " + st.StateTopic + ": the job never ran with job.coordinator kafka)"
		}
		if !st.Found {
			return "none (no checkpoint store in " + st.Dir + ": the job never ran with this data_dir)"
		}
		return "none decided yet"
	}
	state := "decided, commit pending"
	if c.Committed {
		state = "committed"
	}
	if c.Empty {
		state += " (empty)"
	}
	return fmt.Sprintf("%d %s txn %d, %s, decided %s ago (%s)", c.ID, c.Label, c.TxnID, state,
		now.Sub(c.DecidedAt).Round(time.Second), view.Time(c.DecidedAt))
}

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

func offset(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}
