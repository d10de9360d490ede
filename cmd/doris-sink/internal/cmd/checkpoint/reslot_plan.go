package checkpoint

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// ReslotPartition is one source partition's move in a reslot.
type ReslotPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Next is the partition's recorded next offset, taken from FromScope,
	// the old slot that owned it (FromCheckpoint: the decision recording
	// it, 0 for a persisted first start).
	Next           int64  `json:"next"`
	FromScope      string `json:"from_scope"`
	FromCheckpoint uint64 `json:"from_checkpoint,omitempty"`
}

// ReslotSlot is one new slot's state record in a reslot.
type ReslotSlot struct {
	Slot  int    `json:"slot"`
	Scope string `json:"scope"`
	// Checkpoint and Label name the operator's empty, committed decision
	// carrying the slot's positions (0 and "" when no partition of the
	// slot has a recorded position: the slot starts like a new one);
	// NextID is the slot's next checkpoint id afterwards.
	Checkpoint uint64            `json:"checkpoint,omitempty"`
	Label      string            `json:"label,omitempty"`
	NextID     uint64            `json:"next_id"`
	Partitions []ReslotPartition `json:"partitions"`
}

// ReslotResult is the output of `checkpoint reslot` (stable names).
type ReslotResult struct {
	Job        string `json:"job"`
	StateTopic string `json:"state_topic"`
	// FromSlots is the recorded slot count, ToSlots the new one.
	FromSlots int `json:"from_slots"`
	ToSlots   int `json:"to_slots"`
	// Slots are the new slots' records; Retired the old scopes (≥
	// ToSlots) rewritten as retired. Both empty when the records already
	// hold ToSlots (a rerun after a crash: only the slot topic changes).
	Slots   []ReslotSlot `json:"slots"`
	Retired []string     `json:"retired"`
	// SlotTopic is the slot topic and SlotTopicAction what the reslot
	// does (did) to it: SlotTopicNone, SlotTopicCreate, SlotTopicRaise,
	// SlotTopicRecreate or SlotTopicDelete; SlotTopicPartitions its
	// partition count before (-1: it does not exist).
	SlotTopic           string `json:"slot_topic"`
	SlotTopicAction     string `json:"slot_topic_action"`
	SlotTopicPartitions int    `json:"slot_topic_partitions"`
	// StateOffsets are the new records' offsets in the state topic
	// (scope → offset), set after the write.
	StateOffsets map[string]int64 `json:"state_offsets,omitempty"`
	// LiveMembers are the members of kafka.group when the reslot planned
	// (DescribeGroups): with --yes they are fenced and stop.
	LiveMembers []jobstate.Member `json:"live_members"`
	By          string            `json:"by"`
	DryRun      bool              `json:"dry_run"`
}

// ReslotRequest is what to reslot to.
type ReslotRequest struct {
	// Slots is the new slot count (≥ 1).
	Slots int
	// DryRun plans without writing or fencing anything.
	DryRun bool
	// Doris is asked about every announced label of an undecided
	// checkpoint (PREPARE/PRECOMMITTED refuses: abort it first; VISIBLE or
	// COMMITTED refuses: a fencing violation). nil: refused, the check is
	// required.
	Doris loader.ResolveDoris
	// By names the operator (default user@host); Now is the clock.
	By  string
	Now func() time.Time
	// AfterWrite, when set, is called after the records are written and
	// before the slot topic changes; its error stops the reslot there
	// (tests: a crash between the transaction and the topic change).
	AfterWrite func() error
}

// ReslotRefusedError is a reslot that cannot be done as asked; nothing
// was changed.
type ReslotRefusedError struct {
	Job    string
	Reason string
}

// Error names the job and the reason.
func (e *ReslotRefusedError) Error() string {
	return "reslot job " + e.Job + ": " + e.Reason + "; nothing was changed"
}

// checkReslotable refuses a view whose slots cannot be re-sliced: a
// last decision not committed, or an announced label of an undecided
// checkpoint that Doris holds open or committed.
func checkReslotable(ctx context.Context, cfg *config.Config, v *jobstate.View, dc loader.ResolveDoris) error {
	job := cfg.Job.Name
	refuse := func(format string, a ...any) error {
		return &ReslotRefusedError{Job: job, Reason: fmt.Sprintf(format, a...)}
	}
	if dc == nil {
		return refuse("no Doris client to check the announced labels with")
	}
	for _, s := range v.Slots {
		st := s.State
		if o := st.Owner; o.Job != job || o.DB != cfg.Doris.Database || o.Table != cfg.Doris.Table {
			return refuse("writer scope %s belongs to job %s table %s.%s, not to this config", s.Scope, o.Job, o.DB, o.Table)
		}
		if d := st.Decided; d != nil && !d.Committed && !d.Empty {
			return refuse("slot %s's last decision, checkpoint %d (label %s, txn %d), is not committed: its rows are promised to "+
				"Doris; start the job to finish it, or resolve it (`doris-sink checkpoint resolve --slot %s`), then reslot",
				s.Scope, d.ID, d.Label, d.TxnID, s.Scope)
		}
		for _, a := range st.Announced {
			state, err := dc.LoadState(ctx, cfg.Doris.Database, a.Label)
			if err != nil {
				return fmt.Errorf("reslot job %s: look up announced label %s of slot %s (checkpoint %d): %w", job, a.Label, s.Scope, a.ID, err)
			}
			switch state {
			case doris.TxnPrepare, doris.TxnPrecommitted:
				txn := "its txn"
				if t, err := dc.TransactionByLabel(ctx, cfg.Doris.Database, a.Label); err == nil {
					txn = fmt.Sprintf("txn %d", t.ID)
				}
				return refuse("slot %s announced label %s (checkpoint %d, undecided) and Doris holds %s %s: abort it first, "+
					"as recovery would (`doris-sink txn abort <txn id> -c <job config> --yes`, or start the job so that it "+
					"recovers), then reslot", s.Scope, a.Label, a.ID, txn, state)
			case doris.TxnVisible, doris.TxnCommitted:
				return refuse("slot %s announced label %s (checkpoint %d) but never decided it, and Doris holds it %s: a fencing "+
					"violation (another writer on the job's label prefix); find the writer (`doris-sink label list`)",
					s.Scope, a.Label, a.ID, state)
			}
		}
	}
	return nil
}

// planReslot computes the new records of v for req.Slots slots: new slot
// j holds the positions of the partitions p with SlotOf(t, p, N) == j,
// each from the old slot that owned p, in an empty committed decision
// whose id is the highest next id of any old scope, so that no new label
// equals an old one of any scope; old scopes ≥ N are rewritten as retired.
func planReslot(cfg *config.Config, v *jobstate.View, req ReslotRequest) (*ReslotResult, []coordlog.SlotRecord, error) {
	n := req.Slots
	res := &ReslotResult{Job: cfg.Job.Name, StateTopic: coordlog.StateTopic(cfg.Job.Name), FromSlots: max(v.SlotCount, 1), ToSlots: n,
		Slots: []ReslotSlot{}, Retired: []string{}, SlotTopic: coordlog.SlotTopic(cfg.Job.Name), By: req.By, DryRun: req.DryRun}
	pos, err := v.Positions()
	if err != nil {
		return nil, nil, fmt.Errorf("reslot job %s: %w", cfg.Job.Name, err)
	}
	var next uint64 = 1
	owner := v.State.Owner
	ids := map[string]string{}
	for _, s := range v.Slots {
		next = max(next, s.State.NextID)
		maps.Copy(ids, s.Source.IDs())
	}
	now := req.Now()
	var recs []coordlog.SlotRecord
	for j := range n {
		o := owner
		o.Writer = coordlog.SlotScope(j)
		rs := ReslotSlot{Slot: j, Scope: o.Writer, Partitions: []ReslotPartition{}}
		mine := map[string]map[int32]int64{}
		for _, t := range slices.Sorted(maps.Keys(pos)) {
			for _, p := range slices.Sorted(maps.Keys(pos[t])) {
				if coordlog.SlotOf(t, p, n) != j {
					continue
				}
				x := pos[t][p]
				if mine[t] == nil {
					mine[t] = map[int32]int64{}
				}
				mine[t][p] = x.Next
				rs.Partitions = append(rs.Partitions, ReslotPartition{Topic: t, Partition: p, Next: x.Next, FromScope: x.Scope,
					FromCheckpoint: x.Checkpoint})
			}
		}
		st := checkpoint.NewState(o)
		if prev := v.SlotByScope(o.Writer); prev != nil && len(mine) > 0 {
			// Scope j continues: its decisions stay in its history (the
			// reslot decision pushes the last one there), so every label
			// it decided is still the job's (`label list`); its
			// announcements were checked above and are dropped.
			st = prev.State.Clone()
			st.Owner, st.Announced = o, nil
		}
		st.NextID = next
		var src coordlog.Source
		if len(mine) > 0 {
			end, err := kafka.PositionOf(mine).MarshalJSON()
			if err != nil {
				return nil, nil, err
			}
			ann, err := st.Announce(now)
			if err != nil {
				return nil, nil, fmt.Errorf("reslot job %s: slot %d: %w", cfg.Job.Name, j, err)
			}
			st.Decide(checkpoint.Decision{ID: ann.ID, Label: ann.Label, Start: end, End: end, Empty: true, DecidedAt: now,
				Committed: true, CommittedAt: now, Counts: &checkpoint.LoadCounts{}})
			rs.Checkpoint, rs.Label = ann.ID, ann.Label
			src = sourceFor(slices.Sorted(maps.Keys(mine)), ids)
		}
		rs.NextID = st.NextID
		res.Slots = append(res.Slots, rs)
		recs = append(recs, coordlog.SlotRecord{Scope: o.Writer, State: st, Source: src})
	}
	for _, s := range v.Slots {
		if s.Slot >= 0 && s.Slot < n {
			continue
		}
		// A retired scope keeps its state (every decision committed, no
		// label open in Doris: checked) and records the new count, so no
		// member of any count resumes it and `run` accepts the layout.
		res.Retired = append(res.Retired, s.Scope)
		recs = append(recs, coordlog.SlotRecord{Scope: s.Scope, State: s.State, Source: s.Source})
	}
	return res, recs, nil
}

// sourceFor is the source info of a position naming topics, with their
// recorded topic IDs (one topic: Topic and TopicID, as a one-topic job
// records them).
func sourceFor(topics []string, ids map[string]string) coordlog.Source {
	if len(topics) == 1 {
		return coordlog.Source{Topic: topics[0], TopicID: ids[topics[0]]}
	}
	m := map[string]string{}
	for _, t := range topics {
		if id, ok := ids[t]; ok {
			m[t] = id
		}
	}
	return coordlog.Source{TopicIDs: m}
}

// reslotSummary says per new slot which partitions it takes from where,
// for the ledger.
func reslotSummary(r *ReslotResult) string {
	var parts []string
	for _, s := range r.Slots {
		var ps []string
		for _, p := range s.Partitions {
			ps = append(ps, fmt.Sprintf("%s/%d@%d from slot %s", p.Topic, p.Partition, p.Next, p.FromScope))
		}
		if len(ps) == 0 {
			ps = append(ps, "no recorded partition")
		}
		parts = append(parts, fmt.Sprintf("slot %s (checkpoint %d): %s", s.Scope, s.Checkpoint, strings.Join(ps, ", ")))
	}
	if len(r.Retired) > 0 {
		parts = append(parts, "retired scopes "+strings.Join(r.Retired, ","))
	}
	return strings.Join(parts, "; ")
}
