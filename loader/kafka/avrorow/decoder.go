package avrorow

import (
	"fmt"
	"time"
)

// Options configure a Decoder.
type Options struct {
	// TimeZone renders timestamp-millis and timestamp-micros (instants)
	// as wall-clock DATETIME text in this zone. nil means UTC. The
	// local-timestamp types are wall-clock times already and are not
	// converted.
	TimeZone *time.Location
	// MaxRowBytes bounds one row's JSON: a record whose row would pass it
	// is a *DecodeError wrapping ErrRowTooBig (0: DefaultMaxRowBytes).
	MaxRowBytes int
}

// Decoder turns Avro binary payloads written with one schema into JSON
// objects. It is immutable after New and safe for concurrent use.
type Decoder struct {
	root   *node
	loc    *time.Location
	utc    bool
	maxRow int
}

// New compiles an Avro schema (its JSON text as the registry stores it;
// refs as for Parse). The top-level schema must be a record: it becomes
// the row, its fields the columns.
func New(schema string, refs map[string]string, opt Options) (*Decoder, error) {
	s, err := Parse(schema, refs)
	if err != nil {
		return nil, err
	}
	if s.root.kind != kRecord {
		return nil, fmt.Errorf("avro schema: the top-level type is %s; a Doris row needs a record (its fields are the columns)", s.root.avroType)
	}
	loc := opt.TimeZone
	if loc == nil {
		loc = time.UTC
	}
	maxRow := opt.MaxRowBytes
	if maxRow <= 0 {
		maxRow = DefaultMaxRowBytes
	}
	return &Decoder{root: s.root, loc: loc, utc: loc == time.UTC, maxRow: maxRow}, nil
}

// AppendJSON decodes one payload (the Avro binary encoding of a record of
// the Decoder's schema, without the 5-byte wire-format header) and appends
// it to dst as one compact JSON object. On error dst is returned as it
// was given (its length), and the *DecodeError names the field path and
// the byte offset in payload. A record is bounded: nesting (MaxDepth),
// array and map items (FreeItems plus the payload's byte count) and the
// row's JSON size (Options.MaxRowBytes) each fail it past their bound.
func (d *Decoder) AppendJSON(dst, payload []byte) ([]byte, error) {
	n := len(dst)
	r := reader{b: payload, items: int64(len(payload)) + FreeItems, limit: n + d.maxRow}
	out, err := d.value(dst, &r, d.root)
	if err != nil {
		return dst[:n], err
	}
	if r.pos != len(payload) {
		return dst[:n], &DecodeError{Offset: r.pos, Err: fmt.Errorf("%d trailing bytes after the record (a payload of another schema?)", len(payload)-r.pos)}
	}
	return out, nil
}
