package verify

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/kafkaopts"
)

// kafkaAdmin reads high watermarks with kadm and counts ranges with
// read_committed consumers.
type kafkaAdmin struct {
	cl  *kgo.Client
	adm *kadm.Client
	// opts are the connection options, for the range readers.
	opts []kgo.Opt
}

// newKafka connects to the kafka.* brokers (TLS and SASL as configured,
// kafkaopts).
func newKafka(cfg *config.Config) (*kafkaAdmin, error) {
	opts, err := kafkaopts.Opts(cfg)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, kgo.ClientID("doris-sink-verify"), kgo.DialTimeout(10*time.Second))...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &kafkaAdmin{cl: cl, adm: kadm.NewClient(cl), opts: opts}, nil
}

// HighWatermarks lists the end offsets of topic.
func (k *kafkaAdmin) HighWatermarks(ctx context.Context, topic string) (map[int32]int64, error) {
	ends, err := k.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic == topic {
			out[o.Partition] = o.Offset
		}
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions (does it exist?)", topic)
	}
	return out, nil
}

// Close closes the client.
func (k *kafkaAdmin) Close() { k.cl.Close() }

// rangeReadTimeout bounds the read of one partition range.
const rangeReadTimeout = 30 * time.Second

// CountRange reads [start, end) of topic/partition with a read_committed
// consumer that keeps control records, so transaction markers are counted
// and records of aborted transactions are not delivered. It refuses a range
// that starts before the partition's log start offset (records deleted by
// retention cannot be counted).
func (k *kafkaAdmin) CountRange(ctx context.Context, topic string, partition int32, start, end int64) (RangeCount, error) {
	starts, err := k.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return RangeCount{}, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	o, ok := starts.Lookup(topic, partition)
	if !ok || o.Err != nil {
		return RangeCount{}, fmt.Errorf("start offset of %s/%d: %v", topic, partition, o.Err)
	}
	if o.Offset > start {
		// Retention (or DeleteRecords) removed records the sink read; on a
		// compact-only topic the head is just compacted away.
		compactOnly, err := k.compactOnly(ctx, topic)
		if err != nil {
			return RangeCount{}, err
		}
		if !compactOnly {
			return RangeCount{}, fmt.Errorf("%s/%d starts at offset %d now: records [%d, %d) were deleted (retention)",
				topic, partition, o.Offset, start, o.Offset)
		}
		if o.Offset >= end {
			return RangeCount{}, nil
		}
		start = o.Offset
	}
	opts := append(append([]kgo.Opt{}, k.opts...),
		kgo.ClientID("doris-sink-verify"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(start)}}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return RangeCount{}, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, rangeReadTimeout)
	defer cancel()
	var rc RangeCount
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return rc, fmt.Errorf("read %s/%d [%d, %d): %w", topic, partition, start, end, err)
		}
		if err := fs.Err(); err != nil {
			return rc, fmt.Errorf("read %s/%d [%d, %d): %w", topic, partition, start, end, err)
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			switch {
			case r.Offset >= end:
				done = true
				return
			case r.Offset < start:
				return
			case r.Attrs.IsControl():
				rc.Control++
			default:
				rc.Records++
				if r.Value == nil {
					rc.Tombstones++
				}
			}
			if r.Offset == end-1 {
				done = true
			}
		})
		if done {
			return rc, nil
		}
	}
}

// compactOnly reports whether topic's cleanup.policy is compact without
// delete: its records disappear only by compaction, never by retention.
func (k *kafkaAdmin) compactOnly(ctx context.Context, topic string) (bool, error) {
	rcs, err := k.adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return false, fmt.Errorf("describe configs of %s: %w", topic, err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return false, fmt.Errorf("describe configs of %s: %w", topic, err)
	}
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" {
			v := c.MaybeValue()
			return strings.Contains(v, "compact") && !strings.Contains(v, "delete"), nil
		}
	}
	return false, nil
}

// TopicID returns topic's current topic ID (hex); a missing topic is an
// error.
func (k *kafkaAdmin) TopicID(ctx context.Context, topic string) (string, error) {
	td, err := k.adm.ListTopics(ctx, topic)
	if err != nil {
		return "", fmt.Errorf("describe %s: %w", topic, err)
	}
	d, ok := td[topic]
	if !ok {
		return "", fmt.Errorf("topic %s does not exist", topic)
	}
	if d.Err != nil {
		return "", fmt.Errorf("describe %s: %w", topic, d.Err)
	}
	return hex.EncodeToString(d.ID[:]), nil
}
