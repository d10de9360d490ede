package jobstate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
)

// Slot is one writer scope's state record in the job's Kafka state topic:
// a writer slot of group mode (job.slots), or the standalone scope "0".
type Slot struct {
	// Scope is the writer scope (the record key is "<job>/<scope>");
	// Slot its slot number, -1 for a scope that is not a decimal number.
	Scope string `json:"scope"`
	Slot  int    `json:"slot"`
	// Slots is the slot count the record holds (1 when it records none).
	Slots int `json:"slots"`
	// Retired is a scope that is not a slot of the job's recorded slot
	// count (`checkpoint reslot` shrank the job): no member resumes it,
	// its positions moved to the slots that own its partitions now.
	Retired bool `json:"retired,omitempty"`
	// Offset is the record's offset in the state topic; Incarnation the
	// token of the writer that wrote it ("reslot" for `checkpoint
	// reslot`).
	Offset      int64  `json:"offset"`
	Incarnation string `json:"incarnation,omitempty"`
	// State is the slot's checkpoint state; Source its source info.
	State  *checkpoint.State `json:"-"`
	Source coordlog.Source   `json:"-"`
	// Operator is the newest operator record of the scope (nil if none);
	// Pending tells whether the slot's owner still has to apply it.
	Operator *coordlog.Operator `json:"operator,omitempty"`
	Pending  bool               `json:"operator_pending,omitempty"`
}

// slotsOf decodes every writer scope's state record of sn, sorted by slot
// number (non-numeric scopes last, by name), and the job's slot count:
// the count the records hold (the highest, so that two records that
// disagree show the larger layout; `run` refuses them,
// *coordlog.SlotsMismatchError).
func slotsOf(sn *coordlog.Snapshot) ([]Slot, int, error) {
	var out []Slot
	count := 1
	for _, scope := range sn.Scopes() {
		st, src, rec, err := sn.StateOf(scope)
		if err != nil {
			return nil, 0, fmt.Errorf("read job %s's writer scope %s from Kafka: %w", sn.Job, scope, err)
		}
		s := Slot{Scope: scope, Slot: slotNumber(scope), Slots: src.RecordedSlots(), Offset: rec.Offset,
			Incarnation: rec.Incarnation, State: st, Source: src}
		op, ok, err := sn.OperatorOf(scope)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			s.Operator, s.Pending = op, OperatorPending(st, op)
		}
		count = max(count, s.Slots)
		out = append(out, s)
	}
	for i := range out {
		out[i].Retired = out[i].Slot < 0 || out[i].Slot >= count
	}
	slices.SortStableFunc(out, func(a, b Slot) int {
		switch {
		case a.Slot >= 0 && b.Slot >= 0:
			return a.Slot - b.Slot
		case a.Slot >= 0:
			return -1
		case b.Slot >= 0:
			return 1
		}
		return 0
	})
	return out, count, nil
}

// slotNumber parses a scope as a slot number (SlotScope's inverse), -1 if
// it is none.
func slotNumber(scope string) int {
	n, err := strconv.Atoi(scope)
	if err != nil || n < 0 || coordlog.SlotScope(n) != scope {
		return -1
	}
	return n
}

// SlotByNumber returns the record of slot j, nil if it has none.
func (v *View) SlotByNumber(j int) *Slot {
	for i := range v.Slots {
		if v.Slots[i].Slot == j {
			return &v.Slots[i]
		}
	}
	return nil
}

// SlotByScope returns the record of writer scope scope, nil if it has
// none.
func (v *View) SlotByScope(scope string) *Slot {
	for i := range v.Slots {
		if v.Slots[i].Scope == scope {
			return &v.Slots[i]
		}
	}
	return nil
}

// Position is one source partition's recorded position: the slot that
// owns it under the job's slot count, and the next offset to read as that
// slot's last decision (or, before it, its persisted first start) records
// it.
type Position struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Slot      int    `json:"slot"`
	Scope     string `json:"scope"`
	// Next is the next offset to read.
	Next int64 `json:"next"`
	// Checkpoint is the decision that records Next (0: the persisted
	// first start, nothing decided yet).
	Checkpoint uint64 `json:"checkpoint,omitempty"`
}

// Positions returns the recorded position of every source partition a
// slot of the view records, topic → partition: partition p of topic t is
// taken from the slot coordlog.SlotOf(t, p, slots) only (a slot's record
// may still name partitions it no longer owns, e.g. a retired slot's), so
// each partition has exactly one position. A file-store view is slot 0.
func (v *View) Positions() (map[string]map[int32]Position, error) {
	out := map[string]map[int32]Position{}
	slots := v.slotList()
	count := max(v.SlotCount, 1)
	for _, s := range slots {
		if s.Retired {
			continue
		}
		raw, id := []byte(s.Source.FirstStart), uint64(0)
		if d := s.State.Decided; d != nil && len(d.End) > 0 {
			raw, id = d.End, d.ID
		}
		pos, ok, err := kafka.ParsePosition(raw)
		if err != nil {
			return nil, fmt.Errorf("slot %s's position (checkpoint %d): %w", s.Scope, id, err)
		}
		if !ok {
			continue
		}
		for t, offs := range pos.PerTopic() {
			for _, p := range slices.Sorted(maps.Keys(offs)) {
				if coordlog.SlotOf(t, p, count) != s.Slot {
					continue
				}
				if out[t] == nil {
					out[t] = map[int32]Position{}
				}
				out[t][p] = Position{Topic: t, Partition: p, Slot: s.Slot, Scope: s.Scope, Next: offs[p], Checkpoint: id}
			}
		}
	}
	return out, nil
}

// slotList returns the view's slots: those read from Kafka, or the file
// store's state as slot 0.
func (v *View) slotList() []Slot {
	if len(v.Slots) > 0 {
		return v.Slots
	}
	if v.State == nil {
		return nil
	}
	s := Slot{Scope: v.State.Owner.Writer, Slot: slotNumber(v.State.Owner.Writer), Slots: 1, State: v.State}
	if v.Kafka != nil {
		s.Source = v.Kafka.Source
	}
	return []Slot{s}
}

// SlotDataDir is the local directory of writer slot's ledger under
// dataDir (job.data_dir) for a job of slots slots: dataDir itself for a
// one-slot job, "<data_dir>/slot-<slot>" in group mode (where `run`
// keeps each slot job's ledger): group.SlotDataDir.
func SlotDataDir(dataDir string, slot, slots int) string {
	return group.SlotDataDir(dataDir, slot, slots)
}
