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
	// TopicID and ProducedThrough are the marks of a job reading one
	// topic (the only form before kafka.topics; see ProducedThroughTopics):
	// TopicID is the source topic's ID (hex) the offsets are of (a
	// recreated topic, checkpoint rebase, starts afresh); ProducedThrough
	// is, per partition of the source topic, the offset before which every
	// dead letter has been produced (by an earlier decision): a decision,
	// new or a heal, produces only its staged dead letters at or past it,
	// and raises it to its end in the same transaction. A heal narrower or
	// wider than the first decision, or a next checkpoint starting inside a
	// range already dead-lettered, therefore produces each dead letter
	// exactly once.
	TopicID         string          `json:"topic_id,omitempty"`
	ProducedThrough map[int32]int64 `json:"produced_through,omitempty"`
	// ProducedThroughTopics are the same marks per source topic, for a job
	// reading several topics or a regex (TopicID and ProducedThrough are
	// then empty): topic → its ID and per-partition marks. A one-topic
	// form read by a job reading several topics (a one-topic job switched
	// to kafka.topics) is the marks of the topic its positions name.
	ProducedThroughTopics map[string]topicMarks `json:"produced_through_topics,omitempty"`
	// Refused are the rows bisection found Doris refuses, from the last
	// decision's start on (the range a heal may replay), at most
	// MaxRefusedRows, each reason at most maxRefusedReason bytes.
	Refused []kafka.RefusedRow `json:"refused,omitempty"`
}

// topicMarks are one source topic's dead-letter marks
// (deadLetterInfo.ProducedThroughTopics).
type topicMarks struct {
	// TopicID is the topic's ID (hex) the marks are of: a recreated topic
	// starts afresh.
	TopicID string `json:"topic_id,omitempty"`
	// Partitions is, per partition, the offset before which every dead
	// letter of the topic has been produced.
	Partitions map[int32]int64 `json:"partitions"`
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
// state loaded or saved, topic → partition → mark, and the topics whose
// recorded marks are of another incarnation of the topic (restarted: no
// marks, their refused rows dropped) (s.mu held). A topic with no recorded
// marks is produced through the last decided end (what every decision did
// before the marks named it).
func (s *Store) producedThrough() (marks map[string]map[int32]int64, stale map[string]bool) {
	marks, stale = map[string]map[int32]int64{}, map[string]bool{}
	put := func(t, id string, offs map[int32]int64) {
		if !s.currentTopicID(t, id) {
			marks[t], stale[t] = map[int32]int64{}, true
			return
		}
		marks[t] = maps.Clone(offs)
		if marks[t] == nil {
			marks[t] = map[int32]int64{}
		}
	}
	if dl := s.doc.DeadLetters; dl != nil {
		for t, m := range dl.ProducedThroughTopics {
			put(t, m.TopicID, m.Partitions)
		}
		if t := s.oneTopicFormTopic(dl); t != "" {
			put(t, dl.TopicID, dl.ProducedThrough)
		}
	}
	if s.last == nil || s.last.Decided == nil {
		return marks, stale
	}
	if pos, ok, err := kafka.ParsePosition(s.last.Decided.End); err == nil && ok {
		ids := s.doc.Source.ids()
		for t, offs := range pos.PerTopic() {
			if _, ok := marks[t]; !ok {
				put(t, ids[t], offs)
			}
		}
	}
	return marks, stale
}

// oneTopicFormTopic returns the topic the one-topic form of dl's marks is
// of: the job's one topic, or with several topics the one topic the
// recorded positions name when dl holds marks of a one-topic job (a
// one-topic job switched to kafka.topics); "" if none.
func (s *Store) oneTopicFormTopic(dl *deadLetterInfo) string {
	if dl.ProducedThroughTopics != nil {
		return ""
	}
	if s.topic != "" {
		return s.topic
	}
	if dl.TopicID == "" && len(dl.ProducedThrough) == 0 {
		// A job reading several topics before per-topic marks: it
		// produced every decision's dead letters (the decided end).
		return ""
	}
	return s.doc.Source.Topic
}

// currentTopicID reports whether marks recorded for topic t's ID id (hex,
// "" unknown) are of its current incarnation (s.mu held).
func (s *Store) currentTopicID(t, id string) bool {
	cur := s.tids[t]
	if t == s.topic && s.tid != "" {
		cur = s.tid
	}
	return id == "" || cur == "" || id == cur
}

// refusedKey identifies a refused row.
type refusedKey struct {
	topic     string
	partition int32
	offset    int64
}

// deadLettersFor returns the staged dead letters decision d produces (the
// ones at or past their topic's marks; a letter whose origin cannot be
// read is produced) and the document's new dead-letter record, each
// topic's marks raised to d's end for the topic (s.mu held).
func (s *Store) deadLettersFor(d *checkpoint.Decision) ([]*kgo.Record, *deadLetterInfo) {
	marks, stale := s.producedThrough()
	var letters []*kgo.Record
	next := make(map[string]map[int32]int64, len(marks))
	for t, offs := range marks {
		next[t] = maps.Clone(offs)
	}
	raise := func(t string, p int32, off int64) {
		if next[t] == nil {
			next[t] = map[int32]int64{}
		}
		next[t][p] = max(next[t][p], off)
	}
	refused := map[refusedKey]kafka.RefusedRow{}
	if dl := s.doc.DeadLetters; dl != nil {
		for _, r := range dl.Refused {
			if !stale[r.Topic] {
				refused[refusedKey{r.Topic, r.Partition, r.Offset}] = r
			}
		}
	}
	for _, r := range s.staged {
		o, ok := kafka.OriginOf(r)
		if !ok {
			letters = append(letters, r)
			continue
		}
		if o.Reason == kafka.ReasonRejected {
			refused[refusedKey{o.Topic, o.Partition, o.Offset}] = kafka.RefusedRow{Topic: o.Topic, Partition: o.Partition,
				Offset: o.Offset, Reason: truncateText(o.Refused, maxRefusedReason)}
		}
		if o.Offset < marks[o.Topic][o.Partition] {
			continue // produced with an earlier decision
		}
		letters = append(letters, r)
		raise(o.Topic, o.Partition, o.Offset+1)
	}
	var end map[string]map[int32]int64
	if pos, ok, err := kafka.ParsePosition(d.End); err == nil && ok {
		end = pos.PerTopic()
		for t, offs := range end {
			for p, off := range offs {
				raise(t, p, off)
			}
		}
	}
	start, startOK, err := kafka.ParsePosition(d.Start)
	startOK = startOK && err == nil
	rows := make([]kafka.RefusedRow, 0, len(refused))
	for _, r := range refused {
		if startOK && r.Offset < start.Of(r.Topic)[r.Partition] {
			continue // before the decided range: never replayed again
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b kafka.RefusedRow) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
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
	if s.doc.DeadLetters == nil && len(s.staged) == 0 && rows == nil && sameOffsets(next, end) {
		// Nothing a reader of the document without the record would get
		// wrong (it derives the marks from this decision's end): keep the
		// document readable by versions that do not know it.
		return letters, nil
	}
	info := &deadLetterInfo{Refused: rows}
	if s.topic != "" && !s.hasOtherTopic(next) {
		info.TopicID, info.ProducedThrough = s.tid, next[s.topic]
		if info.ProducedThrough == nil {
			info.ProducedThrough = map[int32]int64{}
		}
		return letters, info
	}
	info.ProducedThroughTopics = make(map[string]topicMarks, len(next))
	for t, offs := range next {
		info.ProducedThroughTopics[t] = topicMarks{TopicID: s.tids[t], Partitions: offs}
	}
	return letters, info
}

// hasOtherTopic reports whether next holds marks of a topic other than
// the job's one topic.
func (s *Store) hasOtherTopic(next map[string]map[int32]int64) bool {
	for t := range next {
		if t != s.topic {
			return true
		}
	}
	return false
}

// sameOffsets reports whether a and b hold the same offsets per topic (a
// topic with no offsets equals an absent one).
func sameOffsets(a, b map[string]map[int32]int64) bool {
	for t, offs := range a {
		if !maps.Equal(offs, b[t]) {
			return false
		}
	}
	for t, offs := range b {
		if !maps.Equal(offs, a[t]) {
			return false
		}
	}
	return true
}

// fillTopicIDs sets the topic ID of every topic's marks recorded without
// one from ids (hex; the IDs looked up when the positions were recorded).
func (dl *deadLetterInfo) fillTopicIDs(ids map[string]string) {
	for t, m := range dl.ProducedThroughTopics {
		if m.TopicID == "" && ids[t] != "" {
			m.TopicID = ids[t]
			dl.ProducedThroughTopics[t] = m
		}
	}
}

// RefusedRows returns the rows bisection found Doris refuses recorded with
// the last state loaded or saved (kafka.RefusedRowSource), but for those of
// a topic recreated since.
func (s *Store) RefusedRows() []kafka.RefusedRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	dl := s.doc.DeadLetters
	if dl == nil {
		return nil
	}
	_, stale := s.producedThrough()
	var rows []kafka.RefusedRow
	for _, r := range dl.Refused {
		if !stale[r.Topic] {
			rows = append(rows, r)
		}
	}
	return rows
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
