package kafka

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Position is the source position of the Connector: per partition of each
// source topic, the next offset to read. A position of one topic is
// encoded as
//
//	{"topic":"orders","offsets":{"0":123,"1":456}}
//
// (Topic and Offsets set, Topics nil: the only form before kafka.topics,
// so a store written by a one-topic job resumes unchanged), and a position
// of any other number of topics as
//
//	{"topics":{"a":{"0":5},"b":{"0":7,"1":2}}}
//
// (Topics set, Topic "" and Offsets nil), with topics and partitions in
// ascending order. PositionOf picks the form. It is what the checkpoint
// store records as a checkpoint's start and end (docs/design.md §2, §7.1).
type Position struct {
	// Topic and Offsets are the position of a one-topic job.
	Topic   string
	Offsets map[int32]int64
	// Topics is the position of a job reading zero or several topics:
	// topic → partition → next offset.
	Topics map[string]map[int32]int64
}

// PositionOf returns the position of the per-topic offsets m in its
// canonical form: the one-topic form when m holds exactly one topic.
func PositionOf(m map[string]map[int32]int64) Position {
	if len(m) == 1 {
		for t, offs := range m {
			return Position{Topic: t, Offsets: offs}
		}
	}
	if m == nil {
		m = map[string]map[int32]int64{}
	}
	return Position{Topics: m}
}

// PerTopic returns p as topic → partition → next offset, whichever form
// p has (the maps are p's, not copies).
func (p Position) PerTopic() map[string]map[int32]int64 {
	if p.Topics != nil || p.Topic == "" {
		return p.Topics
	}
	return map[string]map[int32]int64{p.Topic: p.Offsets}
}

// TopicNames returns the topics p names, sorted.
func (p Position) TopicNames() []string {
	return slices.Sorted(maps.Keys(p.PerTopic()))
}

// Of returns the offsets p holds for topic (nil if it names none).
func (p Position) Of(topic string) map[int32]int64 {
	return p.PerTopic()[topic]
}

type positionJSON struct {
	Topic   string                      `json:"topic"`
	Offsets map[string]int64            `json:"offsets"`
	Topics  map[string]map[string]int64 `json:"topics"`
}

// MarshalJSON encodes p deterministically (topics and partitions
// ascending), in the form PositionOf gives its topics.
func (p Position) MarshalJSON() ([]byte, error) {
	per := p.PerTopic()
	if len(per) == 1 {
		for t, offs := range per {
			topic, err := json.Marshal(t)
			if err != nil {
				return nil, err
			}
			b := append([]byte(`{"topic":`), topic...)
			b = append(b, `,"offsets":`...)
			return append(appendOffsets(b, offs), '}'), nil
		}
	}
	b := []byte(`{"topics":{`)
	for i, t := range slices.Sorted(maps.Keys(per)) {
		if i > 0 {
			b = append(b, ',')
		}
		topic, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		b = append(append(b, topic...), ':')
		b = appendOffsets(b, per[t])
	}
	return append(b, "}}"...), nil
}

// appendOffsets appends {"<partition>":<offset>,...} (ascending).
func appendOffsets(b []byte, offs map[int32]int64) []byte {
	b = append(b, '{')
	for i, part := range slices.Sorted(maps.Keys(offs)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(part), 10)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, offs[part], 10)
	}
	return append(b, '}')
}

// UnmarshalJSON decodes either encoding of MarshalJSON; a "topics" form
// naming one topic is normalized to the one-topic form.
func (p *Position) UnmarshalJSON(b []byte) error {
	var pj positionJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return err
	}
	if pj.Topics != nil && (pj.Topic != "" || pj.Offsets != nil) {
		return fmt.Errorf("position %s: both \"topic\" and \"topics\"", bytes.TrimSpace(b))
	}
	if pj.Topics == nil {
		offs, err := parseOffsets(pj.Topic, pj.Offsets)
		if err != nil {
			return err
		}
		*p = Position{Topic: pj.Topic, Offsets: offs}
		return nil
	}
	per := make(map[string]map[int32]int64, len(pj.Topics))
	for t, raw := range pj.Topics {
		if t == "" {
			return fmt.Errorf("position %s: empty topic name", bytes.TrimSpace(b))
		}
		offs, err := parseOffsets(t, raw)
		if err != nil {
			return err
		}
		per[t] = offs
	}
	*p = PositionOf(per)
	return nil
}

// parseOffsets decodes one topic's {"<partition>":<offset>} map.
func parseOffsets(topic string, raw map[string]int64) (map[int32]int64, error) {
	offs := make(map[int32]int64, len(raw))
	for k, v := range raw {
		part, err := strconv.ParseInt(k, 10, 32)
		if err != nil || part < 0 {
			return nil, fmt.Errorf("topic %s partition %q: want a non-negative integer", topic, k)
		}
		if v < 0 {
			return nil, fmt.Errorf("topic %s partition %d: offset %d is negative", topic, part, v)
		}
		offs[int32(part)] = v
	}
	return offs, nil
}

// ParsePosition decodes a position recorded by the loader; nil or empty
// raw (a fresh start) gives a zero Position and ok false.
func ParsePosition(raw []byte) (pos Position, ok bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Position{}, false, nil
	}
	if err := json.Unmarshal(raw, &pos); err != nil {
		return Position{}, false, fmt.Errorf("source position %s: %w", raw, err)
	}
	return pos, true, nil
}

// clone returns a deep copy of p.
func (p Position) clone() Position {
	if p.Topics == nil {
		return Position{Topic: p.Topic, Offsets: maps.Clone(p.Offsets)}
	}
	return Position{Topics: topicOffsets(p.Topics).clone()}
}

// String returns the JSON encoding of p.
func (p Position) String() string {
	b, _ := p.MarshalJSON()
	return string(b)
}

// topicOffsets are offsets per topic and partition: topic → partition →
// offset.
type topicOffsets map[string]map[int32]int64

// clone returns a deep copy of o (never nil).
func (o topicOffsets) clone() topicOffsets {
	out := make(topicOffsets, len(o))
	for t, offs := range o {
		out[t] = maps.Clone(offs)
	}
	return out
}

// get returns topic t partition p's offset.
func (o topicOffsets) get(t string, p int32) (int64, bool) {
	v, ok := o[t][p]
	return v, ok
}

// set sets topic t partition p's offset.
func (o topicOffsets) set(t string, p int32, v int64) {
	offs := o[t]
	if offs == nil {
		offs = map[int32]int64{}
		o[t] = offs
	}
	offs[p] = v
}

// overlay copies every offset of from into o.
func (o topicOffsets) overlay(from map[string]map[int32]int64) {
	for t, offs := range from {
		for p, v := range offs {
			o.set(t, p, v)
		}
	}
}

// position returns o as a Position (a copy).
func (o topicOffsets) position() Position { return PositionOf(o.clone()) }
