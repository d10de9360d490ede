package coordlog

import (
	"cmp"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// deadLetterInfo is what a Store's document records of the dead letters
// its decisions produced. Additive: a document written before it (nil)
// reads as "unknown", taken as "produced through the decided end" (what
// those versions did: each decision produced its checkpoint's dead
// letters, a heal none).
type deadLetterInfo struct {
	// TopicID is the source topic's ID (hex) the offsets below are of; a
	// recreated topic (checkpoint rebase) starts afresh.
	TopicID string `json:"topic_id,omitempty"`
	// ProducedThrough is, per partition of the source topic, the offset
	// before which every dead letter has been produced (by an earlier
	// decision): a decision, new or a heal, produces only its staged dead
	// letters at or past it, and raises it to its end in the same
	// transaction. A heal narrower or wider than the first decision, or a
	// next checkpoint starting inside a range already dead-lettered,
	// therefore produces each dead letter exactly once.
	ProducedThrough map[int32]int64 `json:"produced_through"`
	// Refused are the rows bisection found Doris refuses, from the last
	// decision's start on (the range a heal may replay), at most
	// MaxRefusedRows, each reason at most maxRefusedReason bytes.
	Refused []kafka.RefusedRow `json:"refused,omitempty"`
}

// MaxRefusedRows bounds the refused rows a Store's document records
// (deadLetterInfo.Refused): the lowest offsets are kept. A heal replaying
// a row past the bound is refused by Doris again and stops the job with a
// *kafka.RejectedError, as without the record. Bisection finds at most
// records.dead_letter_max_bisect_loads (default 24) rows per refused
// range, so the bound is reached only by many bisections inside one
// checkpoint.
const MaxRefusedRows = 256

// maxRefusedReason bounds the reason text of one recorded refused row.
const maxRefusedReason = 256

// producedThrough returns a copy of the dead-letter marks of the last
// state loaded or saved (s.mu held).
func (s *Store) producedThrough() map[int32]int64 {
	if dl := s.doc.DeadLetters; dl != nil {
		if dl.TopicID != "" && dl.TopicID != s.tid {
			return map[int32]int64{}
		}
		return maps.Clone(dl.ProducedThrough)
	}
	marks := map[int32]int64{}
	if s.last == nil || s.last.Decided == nil {
		return marks
	}
	if pos, ok, err := kafka.ParsePosition(s.last.Decided.End); err == nil && ok && pos.Topic == s.topic {
		maps.Copy(marks, pos.Offsets)
	}
	return marks
}

// deadLettersFor returns the staged dead letters decision d produces (the
// ones at or past the marks; a letter whose origin cannot be read is
// produced) and the document's new dead-letter record (s.mu held).
func (s *Store) deadLettersFor(d *checkpoint.Decision) ([]*kgo.Record, *deadLetterInfo) {
	marks := s.producedThrough()
	var letters []*kgo.Record
	next := maps.Clone(marks)
	if next == nil {
		next = map[int32]int64{}
	}
	refused := map[[2]int64]kafka.RefusedRow{}
	if dl := s.doc.DeadLetters; dl != nil && (dl.TopicID == "" || dl.TopicID == s.tid) {
		for _, r := range dl.Refused {
			refused[[2]int64{int64(r.Partition), r.Offset}] = r
		}
	}
	for _, r := range s.staged {
		o, ok := kafka.OriginOf(r)
		if !ok || o.Topic != s.topic {
			letters = append(letters, r)
			continue
		}
		if o.Reason == kafka.ReasonRejected {
			refused[[2]int64{int64(o.Partition), o.Offset}] = kafka.RefusedRow{Topic: o.Topic, Partition: o.Partition,
				Offset: o.Offset, Reason: truncateText(o.Refused, maxRefusedReason)}
		}
		if o.Offset < marks[o.Partition] {
			continue // produced with an earlier decision
		}
		letters = append(letters, r)
		next[o.Partition] = max(next[o.Partition], o.Offset+1)
	}
	var end map[int32]int64
	if pos, ok, err := kafka.ParsePosition(d.End); err == nil && ok && pos.Topic == s.topic {
		end = pos.Offsets
		for p, off := range pos.Offsets {
			next[p] = max(next[p], off)
		}
	}
	start, startOK, err := kafka.ParsePosition(d.Start)
	startOK = startOK && err == nil && start.Topic == s.topic
	rows := make([]kafka.RefusedRow, 0, len(refused))
	for _, r := range refused {
		if startOK && r.Offset < start.Offsets[r.Partition] {
			continue // before the decided range: never replayed again
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b kafka.RefusedRow) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	if len(rows) > MaxRefusedRows {
		s.log.log.Warn("coordinator log: more rows Doris refused in the decided range than a decision records; a heal "+
			"replaying the others stops at Doris's refusal", "state_topic", s.log.Topic(), "refused", len(rows),
			"recorded", MaxRefusedRows)
		rows = rows[:MaxRefusedRows]
	}
	if len(rows) == 0 {
		rows = nil
	}
	if s.doc.DeadLetters == nil && len(s.staged) == 0 && rows == nil && maps.Equal(next, end) {
		// Nothing a reader of the document without the record would get
		// wrong (it derives the marks from this decision's end): keep the
		// document readable by versions that do not know it.
		return letters, nil
	}
	return letters, &deadLetterInfo{TopicID: s.tid, ProducedThrough: next, Refused: rows}
}

// RefusedRows returns the rows bisection found Doris refuses recorded with
// the last state loaded or saved (kafka.RefusedRowSource).
func (s *Store) RefusedRows() []kafka.RefusedRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	dl := s.doc.DeadLetters
	if dl == nil || (dl.TopicID != "" && dl.TopicID != s.tid) {
		return nil
	}
	return slices.Clone(dl.Refused)
}

// truncateText cuts s to at most n bytes on a UTF-8 boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
