package protorow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Options configures a Decoder.
type Options struct {
	// TimeZone is the zone google.protobuf.Timestamp values are rendered
	// in (as Doris DATETIME(6) text, which carries no zone). nil: UTC.
	TimeZone *time.Location
	// MaxRowBytes bounds one row's JSON: a record whose row would pass it
	// is a *DecodeError wrapping ErrRowTooBig (0: DefaultMaxRowBytes). A
	// message's absent fields are written with their zero values, so a
	// payload of many empty messages can expand far beyond its size.
	MaxRowBytes int
}

// DefaultMaxRowBytes bounds one row's JSON (Options.MaxRowBytes): 100
// MiB, the BE's streaming_load_json_max_mb, the largest JSON document
// Doris parses in one piece.
const DefaultMaxRowBytes = 100 << 20

// ErrRowTooBig is wrapped by a DecodeError when the row's JSON would pass
// Options.MaxRowBytes.
var ErrRowTooBig = errors.New("row too big")

// Decoder turns Protobuf record payloads of one registry schema into JSON
// rows. It is immutable after New and safe for concurrent use; scratch
// space comes from a pool, so the steady state allocates nothing per
// record.
type Decoder struct {
	file protoreflect.FileDescriptor
	// top are the plans of the file's top-level messages in declaration
	// order (the first element of a Confluent message index selects one).
	top     []*msgPlan
	tz      *time.Location
	maxRow  int
	pool    sync.Pool // *state
	unknown atomic.Int64
}

// New compiles a registry schema (the .proto text). refs maps each
// reference name (the registry's references[].name, the import path such as
// "common/money.proto") to its schema text, resolved transitively by the
// caller; the well-known types (google/protobuf/*.proto) need no refs.
func New(schema string, refs map[string]string, opt Options) (*Decoder, error) {
	fd, err := compile(schema, refs)
	if err != nil {
		return nil, err
	}
	if fd.Messages().Len() == 0 {
		return nil, errors.New("protobuf schema declares no message")
	}
	d := &Decoder{file: fd, tz: opt.TimeZone, maxRow: opt.MaxRowBytes}
	if d.maxRow <= 0 {
		d.maxRow = DefaultMaxRowBytes
	}
	if d.tz == nil {
		d.tz = time.UTC
	}
	p := newPlanner()
	for i := range fd.Messages().Len() {
		mp, err := p.message(fd.Messages().Get(i))
		if err != nil {
			return nil, fmt.Errorf("protobuf schema: %w", err)
		}
		d.top = append(d.top, mp)
	}
	d.pool.New = func() any { return &state{tz: d.tz} }
	return d, nil
}

// AppendJSON decodes one record payload, the bytes after the 5-byte
// Confluent header (magic 0, big-endian schema id), which still begin with
// the Confluent message-index list, and appends one JSON object (one Doris
// row, no newline) to dst. On error dst is returned unchanged with a
// *DecodeError naming the field and byte offset. A record is bounded:
// messages nested deeper than 10000 and rows whose JSON would pass
// Options.MaxRowBytes fail (repeated and map items each take payload
// bytes, so their count is bounded by the payload's size).
func (d *Decoder) AppendJSON(dst, payload []byte) ([]byte, error) {
	mp, off, err := d.messageAt(payload)
	if err != nil {
		return dst, err
	}
	s := d.pool.Get().(*state)
	s.limit = len(dst) + d.maxRow
	out, err := s.walk(dst, payload[off:], off, mp)
	if s.unknown != 0 {
		d.unknown.Add(s.unknown)
		s.unknown = 0
	}
	s.reset()
	d.pool.Put(s)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// UnknownFields returns how many fields the payloads decoded so far carried
// that the schema does not declare (skipped, as every protobuf reader does:
// a producer on a newer schema version).
func (d *Decoder) UnknownFields() int64 { return d.unknown.Load() }

// MessageName returns the full name of the message the message index
// selects (for tests and error messages).
func (d *Decoder) MessageName(index ...int) (string, error) {
	list := d.top
	var mp *msgPlan
	if len(index) == 0 {
		index = []int{0}
	}
	for _, i := range index {
		if i < 0 || i >= len(list) {
			return "", fmt.Errorf("message index %v: %d out of range", index, i)
		}
		mp = list[i]
		list = mp.nested
	}
	return string(mp.name), nil
}

// DecodeError is a payload that does not decode against the schema.
type DecodeError struct {
	// Offset is the byte offset in the payload (counting the message-index
	// list) where the problem is.
	Offset int
	// Field is the full name of the field being decoded, if any.
	Field string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any (a protowire parse error).
	Err error
}

// Error says where and what, and the underlying error.
func (e *DecodeError) Error() string {
	msg := fmt.Sprintf("protobuf payload at byte %d", e.Offset)
	if e.Field != "" {
		msg += ", field " + e.Field
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// File returns the compiled schema. Producers in tests and tools build
// messages of its types (dynamicpb) so that what they write and what the
// decoder reads come from one compilation.
func (d *Decoder) File() protoreflect.FileDescriptor { return d.file }
