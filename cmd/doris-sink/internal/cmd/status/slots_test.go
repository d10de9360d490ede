package status

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Issue 12 "Operators see the whole group": `status` of a two-slot job
// shows every partition's loaded end from the slot that owns it (before,
// only slot 0's record was read: the other slot's partitions had none),
// with its slot and owner, and a table of the writer slots; a stopped job
// has no owner.
func TestStatusShowsEverySlot(t *testing.T) {
	t.Parallel()
	const parts = 4
	j := jobtest.NewKafkaPartitions(t, parts)
	want := map[int32]int64{}
	for s := range 2 {
		m := map[int32]int64{}
		for p := range int32(parts) {
			if coordlog.SlotOf(jobtest.Topic, p, 2) == s {
				m[p], want[p] = int64(s+1), int64(s+1)
			}
		}
		j.Decide(s, 2, []map[int32]int64{m}, false)
	}
	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob | config.NeedTable})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Metrics.Listen = ""
	res := collect(context.Background(), cfg, time.Now)
	if res.Group == nil || res.Group.Slots != 2 || len(res.Group.SlotViews) != 2 || len(res.Partitions) != parts {
		t.Fatalf("group %+v, partitions %+v", res.Group, res.Partitions)
	}
	for _, p := range res.Partitions {
		slot := coordlog.SlotOf(jobtest.Topic, p.Partition, 2)
		if p.Loaded == nil || *p.Loaded != want[p.Partition] || p.Slot == nil || *p.Slot != slot || p.Owner != jobstate.OwnerStopped {
			t.Errorf("partition %+v, want loaded %d by slot %d, no owner", p, want[p.Partition], slot)
		}
	}
	f, out, _ := cmdutil.NewTestFactory(false)
	if err := printResult(f.IO, res, time.Now()); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "Writer slots (2)") || strings.Count(s, jobstate.OwnerStopped) < 2+parts {
		t.Errorf("human view:\n%s", s)
	}
}
