package jobstate

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
)

// The group view is the library's (loader/kafka/group): these names keep
// the commands' code and JSON output as they are.
type (
	// Member is group.MemberView.
	Member = group.MemberView
	// SlotView is group.SlotView.
	SlotView = group.SlotView
	// PartitionView is group.PartitionView.
	PartitionView = group.PartitionView
	// Group is group.View.
	Group = group.View
)

// Owner texts of the group view (group.OwnerStopped, ...).
const (
	OwnerStopped     = group.OwnerStopped
	OwnerRebalancing = group.OwnerRebalancing
	OwnerStandalone  = group.OwnerStandalone
)

// ReadGroup builds the group view of v (read from Kafka by Open) with
// group.ReadView, over a Kafka client of cfg: slot owners, positions and
// log ends. It never joins the group or fences anything; what Kafka does
// not answer is recorded in Group.Errors, not returned.
func ReadGroup(ctx context.Context, cfg *config.Config, v *View) *Group {
	// One slot with job.coordinator kafka runs through the group too: its
	// owner and standbys are members (only the file coordinator runs
	// standalone).
	src := group.ViewSource{Job: cfg.Job.Name, ConsumerGroup: cfg.Kafka.Group, Slots: v.SlotCount,
		Grouped: cfg.Job.Coordinator == config.CoordinatorKafka, SourceTopics: cfg.Kafka.SourceTopics(),
		Positions: map[string]map[int32]group.RecordedPosition{}}
	pos, err := v.Positions()
	if err != nil {
		src.Errors = append(src.Errors, err.Error())
	}
	for t, ps := range pos {
		src.Positions[t] = map[int32]group.RecordedPosition{}
		for p, x := range ps {
			src.Positions[t][p] = group.RecordedPosition{Next: x.Next, Checkpoint: x.Checkpoint}
		}
	}
	for _, s := range v.slotList() {
		rs := group.RecordedSlot{Slot: s.Slot, Scope: s.Scope, Retired: s.Retired, NextID: s.State.NextID,
			Announced: len(s.State.Announced), OperatorPending: s.Pending}
		if d := s.State.Decided; d != nil {
			rs.Checkpoint, rs.Label, rs.Committed = d.ID, d.Label, d.Committed
		}
		src.Recorded = append(src.Recorded, rs)
	}
	var adm *kadm.Client
	if opts, err := kafkaopts.Opts(cfg); err != nil {
		src.Errors = append(src.Errors, err.Error())
	} else if cl, err := kgo.NewClient(append(opts, kgo.ClientID("doris-sink-ops"))...); err != nil {
		src.Errors = append(src.Errors, "kafka client: "+err.Error())
	} else {
		defer cl.Close()
		adm = kadm.NewClient(cl)
	}
	return group.ReadView(ctx, adm, src)
}
