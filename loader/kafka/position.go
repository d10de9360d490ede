package kafka

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Position is the source position of the Connector: per partition of
// Topic, the next offset to read. It is encoded as
//
//	{"topic":"orders","offsets":{"0":123,"1":456}}
//
// with partitions in ascending numeric order, and is what the checkpoint
// store records as a checkpoint's start and end (docs/design.md §2).
type Position struct {
	Topic   string
	Offsets map[int32]int64
}

type positionJSON struct {
	Topic   string           `json:"topic"`
	Offsets map[string]int64 `json:"offsets"`
}

// MarshalJSON encodes p deterministically (partitions ascending).
func (p Position) MarshalJSON() ([]byte, error) {
	topic, err := json.Marshal(p.Topic)
	if err != nil {
		return nil, err
	}
	parts := make([]int32, 0, len(p.Offsets))
	for part := range p.Offsets {
		parts = append(parts, part)
	}
	slices.Sort(parts)
	b := append([]byte(`{"topic":`), topic...)
	b = append(b, `,"offsets":{`...)
	for i, part := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(part), 10)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, p.Offsets[part], 10)
	}
	return append(b, "}}"...), nil
}

// UnmarshalJSON decodes the encoding of MarshalJSON.
func (p *Position) UnmarshalJSON(b []byte) error {
	var pj positionJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return err
	}
	offs := make(map[int32]int64, len(pj.Offsets))
	for k, v := range pj.Offsets {
		part, err := strconv.ParseInt(k, 10, 32)
		if err != nil || part < 0 {
			return fmt.Errorf("partition %q: want a non-negative integer", k)
		}
		if v < 0 {
			return fmt.Errorf("partition %d: offset %d is negative", part, v)
		}
		offs[int32(part)] = v
	}
	p.Topic, p.Offsets = pj.Topic, offs
	return nil
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
	return Position{Topic: p.Topic, Offsets: maps.Clone(p.Offsets)}
}

// String returns the JSON encoding of p.
func (p Position) String() string {
	b, _ := p.MarshalJSON()
	return string(b)
}
