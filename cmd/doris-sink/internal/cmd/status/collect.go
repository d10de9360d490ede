package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// collect joins the store, Kafka and process views of cfg's job. Every
// source may fail; what it could not tell is left out and said why.
func collect(ctx context.Context, cfg *config.Config, now func() time.Time) *Result {
	table := cfg.Doris.Database + "." + cfg.Doris.Table
	res := &Result{Job: cfg.Job.Name, Topic: cfg.Kafka.DescribeTopics(), Table: table, Partitions: []Partition{},
		Store: Store{Dir: cfg.Job.DataDir}}
	type tp struct {
		topic string
		part  int32
	}
	parts := map[tp]*Partition{}
	part := func(t string, p int32) *Partition {
		k := tp{t, p}
		if parts[k] == nil {
			parts[k] = &Partition{Topic: t, Partition: p}
		}
		return parts[k]
	}
	topics := slices.Clone(cfg.Kafka.SourceTopics())

	v := readStore(ctx, cfg, res)
	decided := newestDecision(v)
	if decided != nil {
		res.LastCheckpoint = checkpointStatus(decided, now())
		res.Tables = tableStatus(decided)
		// Every partition's loaded end, from the slot that owns it (one
		// slot, the store's only one, for a standalone job).
		pos, err := v.Positions()
		if err != nil {
			res.Store.Error = err.Error()
		}
		for t, offs := range pos {
			for p, x := range offs {
				if x.Checkpoint != 0 {
					part(t, p).Loaded = ptr(x.Next)
				}
			}
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	if v != nil && v.Kafka != nil {
		res.Group = jobstate.ReadGroup(ctx, cfg, v)
		for _, gp := range res.Group.Partitions {
			pp := part(gp.Topic, gp.Partition)
			pp.Slot, pp.Scope, pp.Owner = ptr(gp.Slot), gp.Scope, gp.Owner
		}
	}

	slices.Sort(topics)
	var kerrs []string
	for _, t := range topics {
		offs, err := listOffsets(ctx, cfg, t)
		if err != nil {
			kerrs = append(kerrs, err.Error())
		}
		for p, o := range offs {
			pp := part(t, p)
			pp.HighWatermark, pp.LogStart = ptr(o.end), ptr(o.start)
		}
	}
	res.KafkaError = strings.Join(kerrs, "; ")

	js := askProcess(ctx, cfg, table, res)
	var read []metrics.PartitionStatus
	if js != nil {
		res.State, res.Stall = js.State, js.Stall
		read = js.Partitions
	}
	for _, s := range res.Process.Slots { // a group member: its slots' read positions
		if s.Job != nil {
			read = append(read, s.Job.Partitions...)
		}
	}
	for _, ps := range read {
		t := ps.Topic
		if t == "" && len(topics) == 1 {
			t = topics[0] // a process before per-topic positions
		}
		if ps.Read != nil {
			part(t, ps.Partition).Read = ptr(*ps.Read)
		}
	}

	fromStart := decided == nil && cfg.Kafka.Start.Mode == config.StartEarliest
	var total int64
	lagKnown := false
	keys := slices.Collect(maps.Keys(parts))
	slices.SortFunc(keys, func(a, b tp) int { return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part)) })
	for _, k := range keys {
		pp := parts[k]
		switch {
		case pp.HighWatermark != nil && pp.Loaded != nil:
			pp.Lag = ptr(max(*pp.HighWatermark-*pp.Loaded, 0))
		case pp.HighWatermark != nil && pp.LogStart != nil && fromStart:
			pp.Lag = ptr(max(*pp.HighWatermark-*pp.LogStart, 0))
		}
		if pp.Lag != nil {
			total += *pp.Lag
			lagKnown = true
		}
		res.Partitions = append(res.Partitions, *pp)
	}
	if lagKnown {
		res.Lag = ptr(total)
	}
	return res
}

// newestDecision returns the most recent last decision of the view's
// active writer slots (the store's last decision for a one-slot job),
// nil before the first.
func newestDecision(v *jobstate.View) *checkpoint.Decision {
	if v == nil {
		return nil
	}
	if len(v.Slots) == 0 {
		return v.State.Decided
	}
	var out *checkpoint.Decision
	for _, s := range v.Slots {
		if d := s.State.Decided; !s.Retired && d != nil && (out == nil || d.DecidedAt.After(out.DecidedAt)) {
			out = d
		}
	}
	return out
}

// readStore fills res.Store and returns the view read (nil: none).
func readStore(ctx context.Context, cfg *config.Config, res *Result) *jobstate.View {
	v, err := jobstate.Open(ctx, cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if cfg.Job.Coordinator == config.CoordinatorKafka {
			res.Store.StateTopic = coordlog.StateTopic(cfg.Job.Name)
		}
		return nil
	case err != nil:
		res.Store.Error = err.Error()
		return nil
	}
	res.Store.Found = true
	if v.Kafka != nil {
		res.Store.StateTopic, res.Store.Offset = v.Kafka.StateTopic, ptr(v.Kafka.Offset)
	}
	if o := v.State.Owner; o.Job != cfg.Job.Name {
		res.Store.Error = fmt.Sprintf("the store in %s belongs to job %q (table %s.%s), not %q", v.Where(), o.Job, o.DB, o.Table, cfg.Job.Name)
		return nil
	}
	return v
}

func checkpointStatus(d *checkpoint.Decision, now time.Time) *metrics.CheckpointStatus {
	return &metrics.CheckpointStatus{ID: d.ID, Label: d.Label, TxnID: d.TxnID, DecidedAt: d.DecidedAt,
		AgeSeconds: max(now.Sub(d.DecidedAt).Seconds(), 0), Committed: d.Committed, Empty: d.Empty}
}

// tableStatus lists d's txns, one per table and sub-load (Txns are sorted
// by table, then sub-load).
func tableStatus(d *checkpoint.Decision) []TableStatus {
	var out []TableStatus
	for _, t := range d.Txns {
		ts := TableStatus{Table: t.Table, Sub: t.Sub, Label: t.Label, TxnID: t.TxnID, Committed: t.Committed}
		if t.Counts != nil {
			ts.RowsLoaded = ptr(t.Counts.RowsLoaded)
		}
		out = append(out, ts)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
