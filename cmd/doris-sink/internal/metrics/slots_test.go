package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/kafka"
)

// Issue 21: a slot job rebuilt on the same member continues its slot's
// counters; a slot that moved away loses its series (the Doris ones too)
// and reads doris_sink_slot_owned 0; every slot has an ownership series.
func TestSlotsCollectorAcrossRebuilds(t *testing.T) {
	m := NewGroup(3, "orders", "db.t")
	owned := map[int]bool{1: true}
	m.WatchOwnership(func() Ownership { return Ownership{Owned: owned, MemberID: "m-1", Generation: 4} })
	rows := func() string {
		var b bytes.Buffer
		families, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "doris_sink_rows_written_total" || f.GetName() == "doris_sink_slot_owned" {
				for _, mm := range f.GetMetric() {
					b.WriteString(f.GetName())
					for _, l := range mm.GetLabel() {
						if l.GetName() == "slot" {
							b.WriteString(" slot=" + l.GetValue())
						}
					}
					v := mm.GetCounter().GetValue() + mm.GetGauge().GetValue()
					b.WriteString(" " + strconv.FormatFloat(v, 'g', -1, 64) + "\n")
				}
			}
		}
		return b.String()
	}
	first := &kafka.Metrics{}
	m.AttachSlot(1, first, nil)
	first.Rows.Add(5)
	first.DeadLettered.Add(1)
	m.DetachSlot(1, first)
	rebuilt := &kafka.Metrics{}
	m.AttachSlot(1, rebuilt, nil)
	rebuilt.Rows.Add(3)
	m.DetachSlot(1, first) // a stale job: ignored
	m.WrapSlotDoris(nil, "db.t", 1)
	m.rowsCommit.WithLabelValues("db.t", "1").Add(7)
	want := "doris_sink_rows_written_total slot=1 8\n" +
		"doris_sink_slot_owned slot=0 0\ndoris_sink_slot_owned slot=1 1\ndoris_sink_slot_owned slot=2 0\n"
	if got := rows(); got != want {
		t.Errorf("after a rebuild:\n%s\nwant\n%s", got, want)
	}
	var log bytes.Buffer
	m.SetReady(true)
	m.NewProgress(slog.New(slog.NewTextHandler(&log, nil)), time.Now()).Report(context.Background(), time.Now())
	if !strings.Contains(log.String(), "slot=1") {
		t.Errorf("progress line of the slot job: %q", log.String())
	}
	if st := m.Status(); st.Group == nil || len(st.Group.Owned) != 1 || st.Group.Owned[0].Slot != 1 || st.Group.Owned[0].Job == nil ||
		st.Group.Owned[0].Job.RowsWritten != 3 || st.Group.Generation != 4 {
		t.Errorf("status: %+v", st.Group)
	}

	// The slot moves away.
	m.DetachSlot(1, rebuilt)
	owned = map[int]bool{}
	m.ReleaseSlot(1)
	want = "doris_sink_slot_owned slot=0 0\ndoris_sink_slot_owned slot=1 0\ndoris_sink_slot_owned slot=2 0\n"
	if got := rows(); got != want {
		t.Errorf("after the slot moved away:\n%s\nwant\n%s", got, want)
	}
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "doris_sink_rows_committed_total" {
			t.Errorf("rows committed series left after the slot moved away: %v", f.GetMetric())
		}
	}
}
