package kafka

import (
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// DeadLetterOrigin is what a dead letter's headers say of its source
// record (HeaderTopic, HeaderPartition, HeaderOffset, HeaderReason).
type DeadLetterOrigin struct {
	Topic     string
	Partition int32
	Offset    int64
	Reason    DeadLetterReason
	// Refused is Doris's reason when Reason is ReasonRejected (the row
	// bisection found Doris refuses), "" otherwise.
	Refused string
}

// OriginOf reads the origin headers of a dead letter this package built;
// ok is false when one is missing or malformed.
func OriginOf(r *kgo.Record) (o DeadLetterOrigin, ok bool) {
	var hasTopic, hasPart, hasOff bool
	for _, h := range r.Headers {
		switch h.Key {
		case HeaderTopic:
			o.Topic, hasTopic = string(h.Value), true
		case HeaderPartition:
			p, err := strconv.ParseInt(string(h.Value), 10, 32)
			o.Partition, hasPart = int32(p), err == nil
		case HeaderOffset:
			off, err := strconv.ParseInt(string(h.Value), 10, 64)
			o.Offset, hasOff = off, err == nil
		case HeaderReason:
			o.Reason = DeadLetterReason(h.Value)
		case HeaderError:
			o.Refused = string(h.Value)
		}
	}
	if o.Reason == ReasonRejected {
		o.Refused = strings.TrimPrefix(o.Refused, refusedPrefix)
	} else {
		o.Refused = ""
	}
	return o, hasTopic && hasPart && hasOff
}

// RefusedRow is a source record bisection found Doris refuses, and
// Doris's reason.
type RefusedRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Reason    string `json:"reason,omitempty"`
}

// RefusedRowSource is implemented by a DeadLetterStager that persists the
// rows bisection found Doris refuses with the decision that dead-letters
// them (coordlog.Store): a Connector starting on such a store knows them,
// so a heal of that decision after a restart dead-letters them again
// (staged; the store does not produce them twice) instead of sending them
// to Doris, which would refuse the heal (a heal is never bisected).
type RefusedRowSource interface {
	// RefusedRows returns the refused rows recorded with the last state
	// loaded or saved.
	RefusedRows() []RefusedRow
}

// loadRefused adds the refused rows the stager persisted to c.refused
// (before the first record is read).
func (c *Connector) loadRefused() {
	src, ok := c.o.stager.(RefusedRowSource)
	if !ok {
		return
	}
	for _, r := range src.RefusedRows() {
		if r.Topic != c.cfg.Topic {
			continue
		}
		if c.refused == nil {
			c.refused = map[recKey]string{}
		}
		c.refused[recKey{r.Partition, r.Offset}] = r.Reason
	}
	if n := len(c.refused); n > 0 {
		c.o.logger.Info("rows Doris refused (found by bisection, recorded with the decision) are dead-lettered if read again",
			"topic", c.cfg.Topic, "rows", n)
	}
}
