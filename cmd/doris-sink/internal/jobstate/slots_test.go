package jobstate_test

import (
	"context"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate/jobtest"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Open reads every writer slot's record: the slot count they hold, each
// slot's labels with its scope, each partition's position from the slot
// SlotOf gives it (a record naming a partition it does not own is not
// taken), and every local slot ledger.
func TestOpenReadsEverySlot(t *testing.T) {
	t.Parallel()
	j := jobtest.NewKafkaPartitions(t, 4)
	own := func(slot int, add int64) map[int32]int64 {
		m := map[int32]int64{}
		for p := range int32(4) {
			if coordlog.SlotOf(jobtest.Topic, p, 2) == slot {
				m[p] = 10 + int64(p) + add
			}
		}
		return m
	}
	j.Decide(0, 2, []map[int32]int64{own(0, 0)}, false)
	stray := own(1, 0)
	for p := range own(0, 0) {
		stray[p] = 999 // slot 1's record names slot 0's partitions: ignored
	}
	st1 := j.Decide(1, 2, []map[int32]int64{stray}, false)
	lg, err := ledger.Open(jobstate.SlotDataDir(j.Dir, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := lg.Append(ledger.Entry{Event: ledger.EventDecided, Checkpoint: 1, Label: st1.Decided.Label}); err != nil {
		t.Fatal(err)
	}
	lg.Close()

	cfg, err := config.Load(config.LoadOptions{File: j.Config, Need: config.NeedJob})
	if err != nil {
		t.Fatal(err)
	}
	v, err := jobstate.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if v.SlotCount != 2 || len(v.Slots) != 2 || v.Slots[1].Scope != "1" || v.Slots[1].Retired || v.State.Owner.Writer != "0" {
		t.Fatalf("view: count %d slots %+v", v.SlotCount, v.Slots)
	}
	pos, err := v.Positions()
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(4) {
		slot := coordlog.SlotOf(jobtest.Topic, p, 2)
		x, ok := pos[jobtest.Topic][p]
		if !ok || x.Slot != slot || x.Next != 10+int64(p) || x.Checkpoint != 1 {
			t.Errorf("partition %d: %+v, want slot %d at %d", p, x, slot, 10+p)
		}
	}
	labels, entries := v.Find(st1.Decided.Label)
	if len(labels) != 1 || labels[0].Scope != "1" || len(entries) != 1 {
		t.Errorf("slot 1's label: %+v, ledger %+v", labels, entries)
	}
	if got := jobstate.SlotDataDir(j.Dir, 0, 1); got != j.Dir {
		t.Errorf("a one-slot job's ledger dir %s, want the data dir", got)
	}
}
