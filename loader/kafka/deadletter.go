package kafka

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/doris/safetext"
)

// Headers added to a dead-lettered record (its own headers are kept).
const (
	HeaderError     = "doris-sink-error"
	HeaderTopic     = "doris-sink-topic"
	HeaderPartition = "doris-sink-partition"
	HeaderOffset    = "doris-sink-offset"
	// HeaderReason is the DeadLetterReason; HeaderColumn the column a
	// rejected row failed on (pre-check reasons only).
	HeaderReason = "doris-sink-reason"
	HeaderColumn = "doris-sink-column"
	// HeaderOriginalSize and HeaderOriginalSHA256 are set on a dead letter
	// whose value was truncated to fit the dead-letter topic
	// (max.message.bytes): the original value's size in bytes (decimal) and
	// its SHA-256 (hex). HeaderTruncated is "true" then.
	HeaderOriginalSize   = "doris-sink-original-size"
	HeaderOriginalSHA256 = "doris-sink-original-sha256"
	HeaderTruncated      = "doris-sink-truncated"
)

// DeadLetterReason says why a record was dead-lettered (HeaderReason, the
// per-reason metric and log line).
type DeadLetterReason string

// Dead-letter reasons.
const (
	// ReasonConvert: the record cannot be converted to a row (format).
	ReasonConvert DeadLetterReason = "convert"
)

// deadLetter sends r to the dead-letter topic with headers naming its
// origin, the reason and the cause. With a DeadLetterStager (exactly once)
// the dead letter joins the open checkpoint's staged dead letters, produced
// in the transaction that decides it; without one
// (Config.DeadLetterAtLeastOnce) it is produced now and acknowledged before
// any checkpoint that skips it is decided, and a rewind produces it again.
func (c *Connector) deadLetter(ctx context.Context, r *kgo.Record, reason DeadLetterReason, column string, rerr *RecordError) error {
	dl, truncated := c.deadLetterRecord(r, reason, column, rerr)
	if c.o.stager != nil {
		c.pend.letters = append(c.pend.letters, dl)
		c.pend.letterBytes += recordSize(dl)
	} else {
		c.mu.Lock()
		cl := c.cl
		c.mu.Unlock()
		if err := cl.ProduceSync(ctx, dl).FirstErr(); err != nil {
			return &DeadLetterError{Record: rerr, Topic: c.cfg.DeadLetterTopic, Err: err}
		}
	}
	c.pend.deadLettered++
	c.metrics.DeadLettered.Add(1)
	c.metrics.addDeadLettered(reason, truncated)
	c.dlLog.note(c.o.logger, c.o.clock.Now(), reason, rerr, c.cfg.DeadLetterTopic)
	return nil
}

// deadLetterOverhead is what a record batch of one record adds to its
// key, value and headers (batch header 61 bytes, record framing, varints),
// rounded up generously.
const deadLetterOverhead = 256

// recordSize is r's key, value and header bytes.
func recordSize(r *kgo.Record) int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

// deadLetterRecord is r (key, value, headers, timestamp) for the
// dead-letter topic, with headers naming its origin and the reason. A
// record that would exceed the topic's max.message.bytes (read at start)
// is truncated to fit: its value is cut (and its key and own headers
// dropped if even they do not fit), with headers carrying the original
// size and SHA-256, so that it can never be refused for its size.
func (c *Connector) deadLetterRecord(r *kgo.Record, reason DeadLetterReason, column string, rerr *RecordError) (dl *kgo.Record, truncated bool) {
	ours := []kgo.RecordHeader{
		{Key: HeaderError, Value: []byte(truncateUTF8(safetext.Escape(rerr.Err.Error()), maxErrorHeader))},
		{Key: HeaderReason, Value: []byte(reason)},
		{Key: HeaderTopic, Value: []byte(r.Topic)},
		{Key: HeaderPartition, Value: strconv.AppendInt(nil, int64(r.Partition), 10)},
		{Key: HeaderOffset, Value: strconv.AppendInt(nil, r.Offset, 10)},
	}
	if column != "" {
		ours = append(ours, kgo.RecordHeader{Key: HeaderColumn, Value: []byte(column)})
	}
	h := append(slices.Clone(r.Headers), ours...)
	dl = &kgo.Record{Topic: c.cfg.DeadLetterTopic, Partition: c.dlPartition(r.Partition), Key: r.Key, Value: r.Value,
		Headers: h, Timestamp: r.Timestamp}
	limit := c.dlMaxBytes - deadLetterOverhead
	if c.dlMaxBytes <= 0 || recordSize(dl)+int64(len(h))*8 <= limit {
		return dl, false
	}
	sum := sha256.Sum256(r.Value)
	ours = append(ours,
		kgo.RecordHeader{Key: HeaderTruncated, Value: []byte("true")},
		kgo.RecordHeader{Key: HeaderOriginalSize, Value: strconv.AppendInt(nil, int64(len(r.Value)), 10)},
		kgo.RecordHeader{Key: HeaderOriginalSHA256, Value: []byte(hex.EncodeToString(sum[:]))},
	)
	dl.Headers = append(slices.Clone(r.Headers), ours...)
	if room := limit - recordSize(&kgo.Record{Key: dl.Key, Headers: dl.Headers}) - int64(len(dl.Headers))*8; room > 0 {
		dl.Value = r.Value[:min(room, int64(len(r.Value)))]
		return dl, true
	}
	// Even the key and the record's own headers do not fit: keep ours only.
	dl.Key, dl.Headers = nil, ours
	room := max(limit-recordSize(&kgo.Record{Headers: ours})-int64(len(ours))*8, 0)
	dl.Value = r.Value[:min(room, int64(len(r.Value)))]
	return dl, true
}

// maxErrorHeader bounds the text of HeaderError.
const maxErrorHeader = 1024

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// dlPartition is the dead-letter partition of a record of source
// partition p: p modulo the dead-letter topic's partition count (read at
// start), so the dead letters of one source partition keep their order.
func (c *Connector) dlPartition(p int32) int32 {
	if c.dlPartitions <= 0 {
		return 0
	}
	return p % c.dlPartitions
}
