package run

import (
	"context"
	"fmt"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
)

// coordinatorOpenTimeout bounds opening the Kafka coordinator log (topic
// check, InitProducerID fencing, reading the state topic).
const coordinatorOpenTimeout = 2 * time.Minute

// fenceChecker is a store that can tell whether a newer process fenced it
// (coordlog.Store).
type fenceChecker interface {
	CheckFenced(ctx context.Context) error
}

// openStore opens the checkpoint store of job.coordinator: the file store
// in job.data_dir (refused once the directory was migrated to Kafka), or
// the Kafka coordinator log (which also persists the first-start position,
// returned as the StartStore; for file, FirstStartFile in job.data_dir). With kafka it then imports a
// file store once (migrate.go), applies a pending operator record
// (operator.go). Both coordinators then refuse stored offsets outside the topic's log
// (positions.go). Every wait ends when ctx does, and within
// coordinatorOpenTimeout.
func openStore(ctx context.Context, cfg *config.Config, d Deps) (checkpoint.Store, kafka.StartStore, error) {
	if cfg.Job.Coordinator != config.CoordinatorKafka {
		fs, err := OpenFileStore(cfg) // the migration marker is checked under the lock
		if err != nil {
			return nil, nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, coordinatorOpenTimeout)
		defer cancel()
		first := newFileFirstStart(cfg) // firststart.go
		if err := checkPositions(ctx, cfg, fs, first, d); err != nil {
			fs.Close()
			return nil, nil, err
		}
		return fs, first, nil
	}
	kc, err := connectorConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, coordinatorOpenTimeout)
	defer cancel()
	if d.Slot == nil {
		// The slot topic is the atomic arbiter of the job's layout, for a
		// standalone start too (job.slots 1: a one-partition topic): it is
		// created or checked before any store opens, so a standalone run
		// and a group member started together on a fresh job cannot both
		// load (see group.EnsureSlotTopic). A group's slot jobs (d.Slot
		// set) were checked by their member.
		if err := group.EnsureSlotTopic(ctx, kafka.ClientOpts(kc), cfg.Job.Name, cfg.SlotCount()); err != nil {
			return nil, nil, err
		}
	}
	owner := Owner(cfg)
	var stamp func() (coordlog.GroupStamp, error)
	if d.Slot != nil {
		owner.Writer, stamp = coordlog.SlotScope(d.Slot.Index), d.Slot.Stamp
	}
	st, err := coordlog.OpenStore(ctx, coordlog.StoreConfig{
		Log: coordlog.Config{Job: cfg.Job.Name, Group: cfg.Kafka.Group, ClientOpts: kafka.ClientOpts(kc),
			Logger: d.Logger, Stamp: stamp},
		Slots:           cfg.SlotCount(),
		Owner:           owner,
		PreviousSources: PreviousSources(cfg),
		Topic:           cfg.Kafka.Topic,
		Topics:          cfg.Kafka.Topics,
		TopicRegex:      cfg.Kafka.TopicRegex,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("job.coordinator kafka: %w", err)
	}
	if err := importFileStore(ctx, st, cfg, d); err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("job.coordinator kafka: %w", err)
	}
	if err := applyOperator(ctx, st, cfg, d); err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("job.coordinator kafka: %w", err)
	}
	if err := checkPositions(ctx, cfg, st, st, d); err != nil {
		st.Close()
		return nil, nil, err
	}
	d.Logger.Info("coordinator: decisions in Kafka", "state_topic", st.Log().Topic(),
		"transactional_id", st.Log().TransactionalID(), "incarnation", st.Log().Incarnation().String())
	return st, st, nil
}
