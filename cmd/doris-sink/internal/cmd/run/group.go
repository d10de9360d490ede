package run

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
	"github.com/doris-sink/doris-sink/loader/kafka/group"
)

// Group mode (job.coordinator kafka, any job.slots; docs/design.md §7.2)
// runs the process as one member of the job's consumer group through
// loader/kafka/group: this file only maps the config, the slot job (Build)
// and the metrics and readiness onto it.

// The terminal errors of a member, as the library defines them.
type (
	// SlotTopicError is group.SlotTopicError.
	SlotTopicError = group.SlotTopicError
	// GroupRefusedError is group.GroupRefusedError.
	GroupRefusedError = group.GroupRefusedError
	// DrainCutError is group.DrainCutError.
	DrainCutError = group.DrainCutError
)

// errKilled ends a member stopped by GroupKnobs.Kill.
var errKilled = group.ErrKilled

// GroupKnobs are testing hooks of group mode; nil: none.
type GroupKnobs struct {
	// KgoOpts are extra options of the membership client (tests: short
	// heartbeat intervals); group.Config.MemberOpts.
	KgoOpts []kgo.Opt
	// SlotStarted is called when slot's job was built and runs; rebuilt
	// counts the rebuilds of the slot since it was assigned.
	SlotStarted func(slot, rebuilt int, job *Job)
	// SlotStopped is called when slot's job ended with err (nil: drained).
	SlotStopped func(slot int, err error)
	// Assigned, Revoked and Revoking are group.Hooks'.
	Assigned, Revoked, Revoking func(slots []int)
	// Kill is group.Config.Kill: once closed, the member stops as kill -9
	// would.
	Kill <-chan struct{}
	// SlotTopicCheck is group.Config.SlotTopicCheck.
	SlotTopicCheck time.Duration
}

// SlotDataDir is group.SlotDataDir: the local directory of slot's job
// (its ledger) under job.data_dir.
func SlotDataDir(dataDir string, slot, slots int) string {
	return group.SlotDataDir(dataDir, slot, slots)
}

// slotJob is a built *Job as the member runs it: its connector, and the
// metrics collector's slot series detached when it ends (a rebuild
// continues its counters).
type slotJob struct {
	job  *Job
	slot int
	m    *metrics.Metrics
}

// Run runs the slot's connector.
func (s *slotJob) Run(ctx context.Context) error {
	if s.m != nil {
		defer s.m.DetachSlot(s.slot, s.job.Metrics)
	}
	return s.job.Connector.Run(ctx)
}

// Drain asks the connector to finish its open checkpoint.
func (s *slotJob) Drain() { s.job.Connector.Drain() }

// runGroup runs cfg as one member of the job's group until drain is
// closed (the first signal: every slot job drains, then the member leaves
// the group), ctx ends (abort) or the member fails (group.Member.Run).
func runGroup(ctx context.Context, cfg *config.Config, d Deps, knobs *GroupKnobs, drain <-chan struct{}, ready func(bool)) error {
	if err := checkNoFileStore(cfg); err != nil {
		return err
	}
	kc, err := connectorConfig(cfg)
	if err != nil {
		return err
	}
	inst, err := claimInstance(cfg)
	if err != nil {
		return fmt.Errorf("job %s: %w", cfg.Job.Name, err)
	}
	defer inst.Release()
	if inst.Moved != "" {
		d.Logger.Warn("group mode: job.data_dir was copied or moved: this process joins the group as a new member "+
			"(the old id stays with the directory it was created in; its slots move after kafka.session_timeout if "+
			"nothing runs there)", "was", inst.Moved, "instance", inst.ID, "instance_file", inst.File)
	}
	// Every slot job and stamp uses the member's instance id.
	c := *cfg
	c.Job.Instance = inst.ID
	cfg = &c
	var k GroupKnobs
	if knobs != nil {
		k = *knobs
	}
	fix := "another running process uses job.instance " + inst.ID + ": give each process its own job.instance"
	if !inst.Explicit {
		fix = "another running process joined with this member's instance id " + inst.ID + " (kept in " + inst.File +
			"): a copy of this job.data_dir runs elsewhere; delete " + InstanceIDFile + " in the copy (or give each its own job.instance)"
	}
	mt := d.Metrics
	gc := group.Config{
		Job: cfg.Job.Name, Group: cfg.Kafka.Group, Slots: cfg.SlotCount(),
		InstanceID: inst.ID, InstanceFix: fix, LeaveOnStop: !inst.Explicit,
		SessionTimeout: cfg.Kafka.SessionTimeout, RebalanceTimeout: cfg.Kafka.RebalanceTimeout,
		ClientOpts: kafka.ClientOpts(kc), MemberOpts: k.KgoOpts, Logger: d.Logger,
		SlotTopicCheck: k.SlotTopicCheck, Kill: k.Kill,
		NewSlotJob: func(ctx context.Context, s group.Slot) (group.SlotJob, error) {
			sc := *cfg
			sc.Job.DataDir = group.SlotDataDir(cfg.Job.DataDir, s.Index, s.Slots)
			sd := d
			sd.Logger = s.Logger
			sd.Slot = &SlotDeps{Index: s.Index, Stamp: s.Stamp}
			job, err := BuildContext(ctx, &sc, sd)
			if err != nil {
				return nil, err
			}
			return &slotJob{job: job, slot: s.Index, m: mt}, nil
		},
		Hooks: group.Hooks{
			Ready: ready,
			SlotStarted: func(s group.Slot, j group.SlotJob) {
				if k.SlotStarted != nil {
					k.SlotStarted(s.Index, s.Rebuilt, j.(*slotJob).job)
				}
			},
			SlotStopped: func(slot int, j group.SlotJob, err error) {
				if k.SlotStopped != nil {
					k.SlotStopped(slot, err)
				}
				if sj, ok := j.(*slotJob); ok && err == nil {
					logDrained(d.Logger.With("slot", slot), sj.job) // what this slot loaded, as a standalone job says it
				}
			},
			Assigned: k.Assigned, Revoked: k.Revoked, Revoking: k.Revoking,
		},
	}
	if mt != nil {
		metricHooks(&gc.Hooks, mt, cfg.Kafka.Group)
	}
	m, err := group.New(gc)
	if err != nil {
		return err
	}
	if mt != nil {
		mt.WatchOwnership(func() metrics.Ownership {
			o := m.Ownership()
			return metrics.Ownership{Owned: o.Owned, MemberID: o.MemberID, Generation: o.Generation}
		})
	}
	d.Logger.Info("group mode: member instance", "instance", inst.ID, "instance_file", inst.File)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-drain:
			m.Drain()
		case <-done:
		}
	}()
	return m.Run(ctx)
}

// metricHooks makes h feed mt: a released slot's series go, and the
// process's group membership (doris_sink_group_rebalancing_since_timestamp_seconds,
// doris_sink_group_session_failures_total, /status membership) follows the
// member in and out of consumerGroup.
func metricHooks(h *group.Hooks, mt *metrics.Metrics, consumerGroup string) {
	h.SlotReleased = mt.ReleaseSlot
	h.GroupIn = func(gen int32, owned []int) { mt.GroupIn(consumerGroup, gen, owned) }
	h.GroupOut = func(since time.Time, cause error) { mt.GroupOut(consumerGroup, since, cause) }
}

// checkNoFileStore refuses group mode over a file checkpoint store in
// job.data_dir that was never imported into Kafka: only a standalone
// start of job.slots 1 (standalone or the group path, whose slot 0 works
// in job.data_dir itself) imports it, and a group of several slots would
// ignore its positions.
func checkNoFileStore(cfg *config.Config) error {
	if cfg.SlotCount() == 1 {
		return nil // slot 0's store is opened in job.data_dir itself, which imports it
	}
	if _, err := checkpoint.ReadFile(cfg.Job.DataDir); err != nil {
		return nil // none (or unreadable: a standalone start reports that)
	}
	mk, err := ReadMigrationMarker(cfg.Job.DataDir)
	if err != nil {
		return err
	}
	if mk != nil && mk.State == MarkerImported {
		return nil
	}
	return fmt.Errorf("job %s: job.data_dir %s holds a file checkpoint store (job.coordinator file) that was never imported "+
		"into Kafka, and group mode (job.slots %d) does not import it: its positions would be ignored and its rows loaded "+
		"again. Start the job once with job.slots: 1 (it imports the store into the state topic), stop it, then run "+
		"`doris-sink checkpoint reslot -c <job config> --slots %d`", cfg.Job.Name, cfg.Job.DataDir, cfg.SlotCount(), cfg.SlotCount())
}

// runGroupMode is Run through the group path (config.GroupMode): the metrics endpoint and the
// signals as for one job (the first signal drains every slot job, the
// second aborts), the member's slot jobs in between. The slot jobs share
// the process's Doris client and metrics endpoint (metrics.NewGroup: the
// per-slot series carry a slot label).
func runGroupMode(ctx context.Context, stop *stopper, cfg *config.Config, d Deps, opts *Options) error {
	log, m := d.Logger, d.Metrics
	if cfg.Metrics.Listen != "" && m != nil {
		srv, err := metrics.Serve(cfg.Metrics.Listen, m, log)
		if err != nil {
			return err
		}
		defer srv.Close()
		log.Info("metrics endpoint", "addr", "http://"+srv.Addr()+"/metrics")
	}
	if iv := cfg.Metrics.LogInterval; iv > 0 && m != nil {
		tk := time.NewTicker(iv)
		defer tk.Stop()
		defer startProgress(ctx, m, log, tk.C)() // one line per owned slot
	}
	drain := make(chan struct{})
	stop.loading(func(s os.Signal) {
		log.Warn("signal: draining every slot job, then leaving the group (a second signal aborts)", "signal", s.String())
		close(drain)
	})
	log.Info("starting", "job", cfg.Job.Name, "topic", cfg.Kafka.DescribeTopics(), "table", cfg.Doris.Database+"."+cfg.Doris.Table,
		"guarantee", cfg.Delivery.Guarantee, "data_dir", cfg.Job.DataDir, "slots", cfg.SlotCount(), "group", cfg.Kafka.Group)
	// Ready once in the group: a standby owning no slot is healthy too
	// (each slot job's start sets it as well).
	err := runGroup(ctx, cfg, d, opts.groupKnobs, drain, func(ready bool) {
		if m != nil {
			m.SetReady(ready)
		}
	})
	if err := runOutcome(err, ctx.Err() != nil, opts, log, cfg.Job.Name,
		"aborted: the open checkpoints were not decided; the slots' next owners resume from their last decided positions"); err != nil {
		return err
	}
	log.Info("group mode: member stopped: every slot job it ran drained (each logged what it loaded)")
	return nil
}
