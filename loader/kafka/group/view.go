package group

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// OwnerStopped is SlotView.OwnerText of a group-mode slot no member holds.
const OwnerStopped = "none (stopped)"

// OwnerRebalancing starts SlotView.OwnerText of a slot no member holds
// while the group rebalances (Kafka answers DescribeGroups without
// assignments then): the owner is unknown, not absent.
const OwnerRebalancing = "unknown (group rebalancing"

// OwnerStandalone is SlotView.OwnerText of a one-slot job of
// job.coordinator file: it runs as one process without group membership,
// so Kafka cannot tell whether it runs.
const OwnerStandalone = "standalone (no group membership)"

// MemberView is one member of the job's consumer group, as DescribeGroups
// answers.
type MemberView struct {
	MemberID   string `json:"member_id"`
	InstanceID string `json:"instance_id,omitempty"`
	ClientID   string `json:"client_id,omitempty"`
	Host       string `json:"host,omitempty"`
	// Slots are the slots (slot-topic partitions) assigned to it.
	Slots []int `json:"slots"`
}

// String names the member: instance (static membership) or member id,
// and host.
func (m MemberView) String() string {
	id := m.MemberID
	if m.InstanceID != "" {
		id = "instance " + m.InstanceID + " (" + m.MemberID + ")"
	}
	if m.Host != "" {
		id += " on " + strings.TrimPrefix(m.Host, "/")
	}
	return id
}

// SlotView is one writer slot in the group view.
type SlotView struct {
	Slot    int    `json:"slot"`
	Scope   string `json:"scope"`
	Retired bool   `json:"retired,omitempty"`
	// Owner is the member holding the slot; nil when none does (the job
	// is stopped, or a one-slot job, which has no membership). OwnerText
	// says it for humans.
	Owner     *MemberView `json:"owner,omitempty"`
	OwnerText string      `json:"owner_text"`
	// Checkpoint, Label and Committed describe the slot's last decision
	// (0 and "" before the first); NextID is its next checkpoint id and
	// Announced counts its announced, undecided labels.
	Checkpoint uint64 `json:"checkpoint"`
	Label      string `json:"label,omitempty"`
	Committed  bool   `json:"committed"`
	NextID     uint64 `json:"next_id"`
	Announced  int    `json:"announced"`
	// Partitions counts the source partitions the slot owns; Lag sums
	// their lag (absent when unknown).
	Partitions int    `json:"partitions"`
	Lag        *int64 `json:"lag,omitempty"`
	// OperatorPending: an operator record the slot's owner has to apply.
	OperatorPending bool `json:"operator_pending,omitempty"`
}

// PartitionView is one source partition in the group view.
type PartitionView struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Slot      int    `json:"slot"`
	Scope     string `json:"scope"`
	// Owner names the member holding the partition's slot, or
	// OwnerStopped / OwnerStandalone / OwnerRebalancing.
	Owner string `json:"owner"`
	// Checkpoint is the slot's decision recording Position (0: the
	// persisted first start, or nothing recorded).
	Checkpoint uint64 `json:"checkpoint,omitempty"`
	// Position is the recorded next offset; LogEnd the partition's log end
	// offset now; Lag LogEnd − Position. Absent: unknown (nothing recorded
	// yet, or Kafka not reachable).
	Position *int64 `json:"position,omitempty"`
	LogEnd   *int64 `json:"log_end,omitempty"`
	Lag      *int64 `json:"lag,omitempty"`
}

// View is the whole job as Kafka knows it: every slot, its owner, and
// every source partition's position and lag (doris-sink's `checkpoint
// show`, `status` and `verify` print it).
type View struct {
	// Slots is the job's recorded slot count; ConsumerGroup is
	// kafka.group (the members' group in group mode) and GroupState its
	// state (Stable, Empty, Dead, ...), "" when not asked.
	Slots         int    `json:"slots"`
	ConsumerGroup string `json:"consumer_group"`
	GroupState    string `json:"group_state,omitempty"`
	// Members are the group's members holding slots of the slot topic.
	Members    []MemberView    `json:"members"`
	SlotViews  []SlotView      `json:"slot_views"`
	Partitions []PartitionView `json:"partitions"`
	// Errors says what Kafka could not tell (owners, log ends).
	Errors []string `json:"errors,omitempty"`
}

// ViewSource is what ReadView needs besides Kafka: the job and what its
// state topic records (coordlog.ReadSlots, or a checkpoint store).
type ViewSource struct {
	// Job names the slot topic; ConsumerGroup is the members' group.
	Job, ConsumerGroup string
	// Slots is the job's recorded slot count (0 counts as 1).
	Slots int
	// Grouped: the job's writers are group members (any job of the Kafka
	// coordinator log); false: a one-slot job that runs standalone
	// without membership (OwnerStandalone).
	Grouped bool
	// SourceTopics are the job's source topics known by name (their log
	// ends are listed even before a slot records a position).
	SourceTopics []string
	// Slots' records: one per recorded writer scope.
	Recorded []RecordedSlot
	// Positions are the recorded next offsets by topic and partition.
	Positions map[string]map[int32]RecordedPosition
	// Errors are what the caller could not read; View.Errors starts with
	// them.
	Errors []string
}

// RecordedSlot is one slot's record in the state topic.
type RecordedSlot struct {
	Slot    int
	Scope   string
	Retired bool
	// Checkpoint, Label and Committed describe the slot's last decision
	// (0 and "" before the first).
	Checkpoint uint64
	Label      string
	Committed  bool
	// NextID is the slot's next checkpoint id; Announced counts its
	// announced, undecided labels; OperatorPending: an operator record its
	// owner has to apply.
	NextID          uint64
	Announced       int
	OperatorPending bool
}

// RecordedPosition is a partition's recorded next offset and the decision
// that recorded it (0: the persisted first start).
type RecordedPosition struct {
	Next       int64
	Checkpoint uint64
}

// ReadView builds the group view of src: slot owners from DescribeGroups
// of src.ConsumerGroup (which member holds which partition of
// coordlog.SlotTopic), positions from src, and log ends of the source
// topics. It never joins the group or fences anything, so it works while
// the job runs; what Kafka does not answer is recorded in View.Errors, not
// returned. A nil adm (no client could be built) leaves owners and log
// ends unknown.
func ReadView(ctx context.Context, adm *kadm.Client, src ViewSource) *View {
	g := &View{Slots: max(src.Slots, 1), ConsumerGroup: src.ConsumerGroup, Members: []MemberView{},
		SlotViews: []SlotView{}, Partitions: []PartitionView{}, Errors: slices.Clone(src.Errors)}
	pos := src.Positions
	var err error
	owners := map[int]*MemberView{}
	// One slot of the Kafka coordinator log runs through the group too:
	// its owner and standbys are members.
	grouped := g.Slots > 1 || src.Grouped
	if adm != nil && grouped {
		g.GroupState, g.Members, err = describeMembers(ctx, adm, src.ConsumerGroup, coordlog.SlotTopic(src.Job))
		if err != nil {
			g.Errors = append(g.Errors, err.Error())
		}
		for i := range g.Members {
			for _, s := range g.Members[i].Slots {
				owners[s] = &g.Members[i]
			}
		}
	}
	ownerText := func(slot int) string {
		switch {
		case owners[slot] != nil:
			return owners[slot].String()
		case !grouped:
			return OwnerStandalone
		case len(g.Members) > 0 && g.GroupState != "Stable":
			return OwnerRebalancing + ": " + g.GroupState + ")"
		}
		return OwnerStopped
	}
	ends := map[string]map[int32]int64{}
	if adm != nil {
		topics := slices.Sorted(maps.Keys(pos))
		for _, t := range src.SourceTopics {
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
		if len(topics) > 0 {
			lo, err := adm.ListEndOffsets(ctx, topics...)
			if err == nil {
				err = lo.Error()
			}
			if err != nil {
				g.Errors = append(g.Errors, fmt.Sprintf("log end offsets of %s: %v", strings.Join(topics, ","), err))
			}
			lo.Each(func(o kadm.ListedOffset) {
				if o.Err != nil {
					return
				}
				if ends[o.Topic] == nil {
					ends[o.Topic] = map[int32]int64{}
				}
				ends[o.Topic][o.Partition] = o.Offset
			})
		}
	}
	// Every partition Kafka lists or a slot records, by topic and partition.
	type tp struct {
		t string
		p int32
	}
	var keys []tp
	for t, m := range ends {
		for p := range m {
			keys = append(keys, tp{t, p})
		}
	}
	for t, m := range pos {
		for p := range m {
			if _, ok := ends[t][p]; !ok {
				keys = append(keys, tp{t, p})
			}
		}
	}
	slices.SortFunc(keys, func(a, b tp) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.p, b.p)) })
	lagOf := map[int]*int64{}
	parts := map[int]int{}
	for _, k := range keys {
		slot := coordlog.SlotOf(k.t, k.p, g.Slots)
		pv := PartitionView{Topic: k.t, Partition: k.p, Slot: slot, Scope: coordlog.SlotScope(slot), Owner: ownerText(slot)}
		if x, ok := pos[k.t][k.p]; ok {
			pv.Position, pv.Checkpoint = ptr(x.Next), x.Checkpoint
		}
		if e, ok := ends[k.t][k.p]; ok {
			pv.LogEnd = ptr(e)
		}
		if pv.Position != nil && pv.LogEnd != nil {
			pv.Lag = ptr(max(*pv.LogEnd-*pv.Position, 0))
			lagOf[slot] = ptr(*pv.Lag + deref(lagOf[slot]))
		}
		parts[slot]++
		g.Partitions = append(g.Partitions, pv)
	}
	seen := map[int]bool{}
	for _, s := range src.Recorded {
		sv := SlotView{Slot: s.Slot, Scope: s.Scope, Retired: s.Retired, NextID: s.NextID,
			Announced: s.Announced, OperatorPending: s.OperatorPending,
			Checkpoint: s.Checkpoint, Label: s.Label, Committed: s.Committed}
		if !s.Retired {
			sv.Owner, sv.OwnerText, sv.Partitions, sv.Lag = owners[s.Slot], ownerText(s.Slot), parts[s.Slot], lagOf[s.Slot]
		} else {
			sv.OwnerText = "retired (checkpoint reslot)"
		}
		seen[s.Slot] = true
		g.SlotViews = append(g.SlotViews, sv)
	}
	for j := range g.Slots { // slots without a record yet
		if !seen[j] {
			g.SlotViews = append(g.SlotViews, SlotView{Slot: j, Scope: coordlog.SlotScope(j), Owner: owners[j],
				OwnerText: ownerText(j), Partitions: parts[j], Lag: lagOf[j]})
		}
	}
	slices.SortStableFunc(g.SlotViews, func(a, b SlotView) int { return cmp.Compare(a.Slot, b.Slot) })
	return g
}

// describeMembers returns group's state and its members that hold
// partitions of slotTopic, with those partitions as their slots.
func describeMembers(ctx context.Context, adm *kadm.Client, group, slotTopic string) (string, []MemberView, error) {
	out := []MemberView{}
	if group == "" {
		return "", out, nil
	}
	dg, err := adm.DescribeGroups(ctx, group)
	if err == nil {
		err = dg.Error()
	}
	if err != nil {
		return "", out, fmt.Errorf("describe consumer group %s (slot owners): %w", group, err)
	}
	d := dg[group]
	for _, m := range d.Members {
		mem := MemberView{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Slots: []int{}}
		if m.InstanceID != nil {
			mem.InstanceID = *m.InstanceID
		}
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				if t.Topic != slotTopic {
					continue
				}
				for _, p := range t.Partitions {
					mem.Slots = append(mem.Slots, int(p))
				}
			}
		}
		slices.Sort(mem.Slots)
		out = append(out, mem)
	}
	slices.SortFunc(out, func(a, b MemberView) int { return cmp.Compare(a.MemberID, b.MemberID) })
	return d.State, out, nil
}

func ptr[T any](v T) *T { return &v }

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
