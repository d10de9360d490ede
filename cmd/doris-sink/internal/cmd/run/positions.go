package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// positionCheckTimeout bounds listing the source topic's log start and
// end offsets at start.
const positionCheckTimeout = 30 * time.Second

// OutOfRange is one partition whose stored offset lies outside its log.
type OutOfRange struct {
	Partition int32
	// Stored is the offset the job would read next (or, Start true, the
	// start of an uncommitted decided checkpoint it would heal).
	Stored int64
	Start  bool
	// LogStart and LogEnd are the partition's first offset and high
	// watermark; Missing is true when the partition no longer exists.
	LogStart, LogEnd int64
	Missing          bool
}

// PositionOutOfRangeError stops a start whose stored source position lies
// outside the topic's log: an offset beyond the log end (the topic was
// truncated or recreated, or the positions belong to another cluster) or
// behind the log start (retention or DeleteRecords removed records the job
// never loaded). Kafka would silently reset the consumer (skipping or
// re-reading records); the job refuses and names the way out, a deliberate
// `doris-sink checkpoint rebase`.
type PositionOutOfRangeError struct {
	Job, Topic string
	// Checkpoint is the decided checkpoint whose positions these are (0:
	// the persisted first start).
	Checkpoint uint64
	Partitions []OutOfRange
}

// Error names every partition, the stored offset, the log range, what is
// affected and the rebase command.
func (e *PositionOutOfRangeError) Error() string {
	var b strings.Builder
	what := "the persisted first start"
	if e.Checkpoint > 0 {
		what = "checkpoint " + strconv.FormatUint(e.Checkpoint, 10) + "'s positions"
	}
	fmt.Fprintf(&b, "job %s: %s lie outside the log of topic %s:", e.Job, what, e.Topic)
	for _, p := range e.Partitions {
		kind := "next offset"
		if p.Start {
			kind = "start of the checkpoint to heal"
		}
		switch {
		case p.Missing:
			fmt.Fprintf(&b, " %s/%d %s %d: the partition does not exist;", e.Topic, p.Partition, kind, p.Stored)
		case p.Stored > p.LogEnd:
			fmt.Fprintf(&b, " %s/%d %s %d is beyond the log end %d (log start %d): the topic was truncated or recreated, "+
				"or the positions are of another cluster; records %d..%d of the new log would be skipped or re-read;",
				e.Topic, p.Partition, kind, p.Stored, p.LogEnd, p.LogStart, p.LogStart, p.LogEnd-1)
		default:
			fmt.Fprintf(&b, " %s/%d %s %d is behind the log start %d (log end %d): records %d..%d were deleted (retention, "+
				"DeleteRecords) before the job loaded them and are lost to it;",
				e.Topic, p.Partition, kind, p.Stored, p.LogStart, p.LogEnd, p.Stored, p.LogStart-1)
		}
	}
	b.WriteString(" nothing was loaded. Decide where the job continues and rebase it deliberately, with the job stopped: " +
		"`doris-sink checkpoint rebase -c <job config> --to earliest|latest --dry-run` (or --offsets <partition>=<offset>,...), " +
		"then the same with --yes")
	return b.String()
}

// checkPositions refuses a start whose stored position (the decided end,
// the start of an uncommitted decision, or the persisted first start) lies
// outside the source topic's log. Listing failures skip the check (the
// connector reports an unreachable Kafka or a missing topic on its own).
func checkPositions(ctx context.Context, cfg *config.Config, store checkpoint.Store, first kafka.StartStore, d Deps) error {
	st, err := store.Load(ctx)
	if err != nil {
		return err
	}
	type stored struct {
		raw   []byte
		start bool
	}
	var check []stored
	var id uint64
	switch dec := st.Decided; {
	case dec != nil:
		id = dec.ID
		check = append(check, stored{raw: dec.End})
		if !dec.Committed && !dec.Empty {
			check = append(check, stored{raw: dec.Start, start: true})
		}
	case first != nil:
		raw, ok, err := first.FirstStart(ctx)
		if err != nil {
			return err
		}
		if ok {
			check = append(check, stored{raw: raw})
		}
	}
	parts := map[string][]OutOfRange{}
	type logBounds struct{ starts, ends map[int32]int64 }
	ranges := map[string]logBounds{}
	for _, c := range check {
		pos, ok, err := kafka.ParsePosition(c.raw)
		if err != nil || !ok {
			continue // the connector refuses an unreadable position itself
		}
		for _, topic := range pos.TopicNames() {
			offs := pos.Of(topic)
			if !configuredTopic(cfg, topic) || len(offs) == 0 {
				continue // the connector refuses a removed topic itself
			}
			r, seen := ranges[topic]
			if !seen {
				if r.starts, r.ends, err = logRange(ctx, cfg, topic); err != nil {
					d.Logger.Warn("cannot check the stored positions against the topic's log; starting without the check",
						"topic", topic, "err", err)
					return nil
				}
				ranges[topic] = r
			}
			for _, p := range slices.Sorted(maps.Keys(offs)) {
				o := offs[p]
				s, okS := r.starts[p]
				e, okE := r.ends[p]
				switch {
				case !okS || !okE:
					parts[topic] = append(parts[topic], OutOfRange{Partition: p, Stored: o, Start: c.start, Missing: true})
				case o > e || o < s:
					parts[topic] = append(parts[topic], OutOfRange{Partition: p, Stored: o, Start: c.start, LogStart: s, LogEnd: e})
				}
			}
		}
	}
	var errs []error
	for _, topic := range slices.Sorted(maps.Keys(parts)) {
		errs = append(errs, &PositionOutOfRangeError{Job: cfg.Job.Name, Topic: topic, Checkpoint: id, Partitions: parts[topic]})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// configuredTopic reports whether cfg selects topic (kafka.topic,
// kafka.topics, or a name kafka.topic_regex matches).
func configuredTopic(cfg *config.Config, topic string) bool {
	if re := cfg.Kafka.TopicRegex; re != "" {
		ok, err := regexp.MatchString(`^(?:`+re+`)$`, topic)
		return err == nil && ok
	}
	return slices.Contains(cfg.Kafka.SourceTopics(), topic)
}

// logRange lists the log start and end offsets of every partition of
// topic.
func logRange(ctx context.Context, cfg *config.Config, topic string) (starts, ends map[int32]int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, positionCheckTimeout)
	defer cancel()
	return LogRangeOf(ctx, cfg, topic)
}

// LogRangeOf lists the log start offset and the high watermark of every
// partition of topic, a source topic of cfg (TLS and SASL as configured).
func LogRangeOf(ctx context.Context, cfg *config.Config, topic string) (starts, ends map[int32]int64, err error) {
	opts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	get := func(what string, f func(context.Context, ...string) (kadm.ListedOffsets, error)) (map[int32]int64, error) {
		lo, err := f(ctx, topic)
		if err == nil {
			err = lo.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("list %s offsets of %s: %w", what, topic, err)
		}
		out := map[int32]int64{}
		lo.Each(func(o kadm.ListedOffset) {
			if o.Topic == topic {
				out[o.Partition] = o.Offset
			}
		})
		if len(out) == 0 {
			return nil, errors.New("topic " + topic + " has no partitions")
		}
		return out, nil
	}
	if starts, err = get("start", adm.ListStartOffsets); err != nil {
		return nil, nil, err
	}
	if ends, err = get("end", adm.ListEndOffsets); err != nil {
		return nil, nil, err
	}
	return starts, ends, nil
}
