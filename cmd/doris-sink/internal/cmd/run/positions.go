package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
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

// OutOfRange is one partition whose stored offset lies outside its log
// (kafka.OutOfRange).
type OutOfRange = kafka.OutOfRange

// PositionOutOfRangeError stops a start whose stored source position lies
// outside the topic's log (kafka.PositionOutOfRangeError: the Connector
// returns the same error when a fetch finds it while the job runs).
type PositionOutOfRangeError = kafka.PositionOutOfRangeError

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
					parts[topic] = append(parts[topic], OutOfRange{Partition: p, Stored: o, Start: c.start, Read: -1, Missing: true})
				case o > e || o < s:
					parts[topic] = append(parts[topic], OutOfRange{Partition: p, Stored: o, Start: c.start, Read: -1, LogStart: s, LogEnd: e})
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
