package status

import (
	"fmt"
	"strconv"
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
	if len(r.Partitions) == 0 {
		return nil
	}
	fmt.Fprintln(io.Out)
	t := cmdutil.NewTable(io, "partition", "loaded", "read", "high watermark", "lag")
	for _, p := range r.Partitions {
		t.AddRow(strconv.Itoa(int(p.Partition)), offset(p.Loaded), offset(p.Read), offset(p.HighWatermark), offset(p.Lag))
	}
	return t.Render()
}

func stateText(r *Result) string {
	s := r.Stall
	if s == nil {
		return r.State
	}
	kind := "stalled"
	if s.Fatal {
		kind = "stalled (fatal: stopping)"
	}
	return fmt.Sprintf("%s for %s since %s: %s", kind, seconds(s.Seconds), view.Time(s.Since), s.Reason)
}

func processText(p *Process) string {
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
