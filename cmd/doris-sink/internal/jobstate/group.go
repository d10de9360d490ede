package jobstate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
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

// Member is one member of the job's consumer group, as DescribeGroups
// answers.
type Member struct {
	MemberID   string `json:"member_id"`
	InstanceID string `json:"instance_id,omitempty"`
	ClientID   string `json:"client_id,omitempty"`
	Host       string `json:"host,omitempty"`
	// Slots are the slots (slot-topic partitions) assigned to it.
	Slots []int `json:"slots"`
}

// String names the member: instance (static membership) or member id,
// and host.
func (m Member) String() string {
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
	Owner     *Member `json:"owner,omitempty"`
	OwnerText string  `json:"owner_text"`
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

// Group is the whole job as Kafka knows it: every slot, its owner, and
// every source partition's position and lag.
type Group struct {
	// Slots is the job's recorded slot count; ConsumerGroup is
	// kafka.group (the members' group in group mode) and GroupState its
	// state (Stable, Empty, Dead, ...), "" when not asked.
	Slots         int    `json:"slots"`
	ConsumerGroup string `json:"consumer_group"`
	GroupState    string `json:"group_state,omitempty"`
	// Members are the group's members holding slots of the slot topic.
	Members    []Member        `json:"members"`
	SlotViews  []SlotView      `json:"slot_views"`
	Partitions []PartitionView `json:"partitions"`
	// Errors says what Kafka could not tell (owners, log ends).
	Errors []string `json:"errors,omitempty"`
}

// ReadGroup builds the group view of v (read from Kafka by Open): slot
// owners from DescribeGroups of kafka.group (which member holds which
// partition of coordlog.SlotTopic), positions from the slots' records, and
// log ends of the source topics. It never joins the group or fences
// anything, so it works while the job runs; what Kafka does not answer is
// recorded in Group.Errors, not returned.
func ReadGroup(ctx context.Context, cfg *config.Config, v *View) *Group {
	g := &Group{Slots: max(v.SlotCount, 1), ConsumerGroup: cfg.Kafka.Group, Members: []Member{},
		SlotViews: []SlotView{}, Partitions: []PartitionView{}}
	pos, err := v.Positions()
	if err != nil {
		g.Errors = append(g.Errors, err.Error())
	}
	var adm *kadm.Client
	if opts, err := kafkaopts.Opts(cfg); err != nil {
		g.Errors = append(g.Errors, err.Error())
	} else if cl, err := kgo.NewClient(append(opts, kgo.ClientID("doris-sink-ops"))...); err != nil {
		g.Errors = append(g.Errors, "kafka client: "+err.Error())
	} else {
		defer cl.Close()
		adm = kadm.NewClient(cl)
	}
	owners := map[int]*Member{}
	// One slot with job.coordinator kafka runs through the group too: its
	// owner and standbys are members (only the file coordinator runs
	// standalone).
	grouped := g.Slots > 1 || cfg.Job.Coordinator == config.CoordinatorKafka
	if adm != nil && grouped {
		g.GroupState, g.Members, err = describeMembers(ctx, adm, cfg.Kafka.Group, coordlog.SlotTopic(cfg.Job.Name))
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
		for _, t := range cfg.Kafka.SourceTopics() {
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
	for _, s := range v.slotList() {
		sv := SlotView{Slot: s.Slot, Scope: s.Scope, Retired: s.Retired, NextID: s.State.NextID,
			Announced: len(s.State.Announced), OperatorPending: s.Pending}
		if !s.Retired {
			sv.Owner, sv.OwnerText, sv.Partitions, sv.Lag = owners[s.Slot], ownerText(s.Slot), parts[s.Slot], lagOf[s.Slot]
		} else {
			sv.OwnerText = "retired (checkpoint reslot)"
		}
		if d := s.State.Decided; d != nil {
			sv.Checkpoint, sv.Label, sv.Committed = d.ID, d.Label, d.Committed
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
func describeMembers(ctx context.Context, adm *kadm.Client, group, slotTopic string) (string, []Member, error) {
	out := []Member{}
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
		mem := Member{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Slots: []int{}}
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
	slices.SortFunc(out, func(a, b Member) int { return cmp.Compare(a.MemberID, b.MemberID) })
	return d.State, out, nil
}

func ptr[T any](v T) *T { return &v }

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
