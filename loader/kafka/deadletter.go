package kafka

import (
	"context"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers added to a dead-lettered record (its own headers are kept).
const (
	HeaderError     = "doris-sink-error"
	HeaderTopic     = "doris-sink-topic"
	HeaderPartition = "doris-sink-partition"
	HeaderOffset    = "doris-sink-offset"
)

// deadLetter produces r unchanged (key, value, headers, timestamp) to the
// dead-letter topic with headers naming its origin and the reason, and
// waits for the acknowledgement: the record is durable there before any
// checkpoint that skips it is decided. After a rewind it may be produced
// again (the dead-letter topic is at-least-once).
func (c *Connector) deadLetter(ctx context.Context, r *kgo.Record, rerr *RecordError) error {
	h := slices.Grow(slices.Clone(r.Headers), 4)
	h = append(h,
		kgo.RecordHeader{Key: HeaderError, Value: []byte(rerr.Err.Error())},
		kgo.RecordHeader{Key: HeaderTopic, Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: HeaderPartition, Value: strconv.AppendInt(nil, int64(r.Partition), 10)},
		kgo.RecordHeader{Key: HeaderOffset, Value: strconv.AppendInt(nil, r.Offset, 10)},
	)
	dl := &kgo.Record{Topic: c.cfg.DeadLetterTopic, Key: r.Key, Value: r.Value, Headers: h, Timestamp: r.Timestamp}
	c.mu.Lock()
	cl := c.cl
	c.mu.Unlock()
	if err := cl.ProduceSync(ctx, dl).FirstErr(); err != nil {
		return &DeadLetterError{Record: rerr, Topic: c.cfg.DeadLetterTopic, Err: err}
	}
	c.o.logger.Warn("record dead-lettered", "err", rerr, "dead_letter_topic", c.cfg.DeadLetterTopic)
	return nil
}
