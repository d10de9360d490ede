package avrorow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Bounds of one decoded record (a hostile record must fail, never crash
// or exhaust the process).
const (
	// MaxDepth bounds the nesting of records, arrays and maps in one value
	// (protorow's and jsonschemarow's bound; about 3 Go frames of a few
	// hundred bytes per level, so well within a goroutine's stack).
	MaxDepth = 10000
	// FreeItems is how many array and map items one record may hold beyond
	// its payload's byte count. An item of a non-null type takes at least
	// one byte; null and empty-record items take none, so without this
	// bound a 4-byte block header claims 2^20 of them (issue 25).
	FreeItems = 1 << 16
	// DefaultMaxRowBytes bounds one row's JSON (Options.MaxRowBytes): 100
	// MiB, the BE's streaming_load_json_max_mb, the largest JSON document
	// Doris parses in one piece.
	DefaultMaxRowBytes = 100 << 20
)

// reader reads the Avro binary encoding from b.
type reader struct {
	b   []byte
	pos int
	// depth is the current nesting of records, arrays and maps; items the
	// array and map items the record may still hold (FreeItems plus its
	// byte count, less the items read); limit the length dst may reach.
	depth int
	items int64
	limit int
}

func (r *reader) fail(err error) error { return &DecodeError{Offset: r.pos, Err: err} }

// long reads a zig-zag varint (int and long share the encoding).
func (r *reader) long() (int64, error) {
	var u uint64
	for shift, i := uint(0), r.pos; ; shift += 7 {
		if i >= len(r.b) {
			return 0, r.fail(ErrShort)
		}
		if shift >= 64 {
			return 0, r.fail(errors.New("varint longer than 10 bytes"))
		}
		c := r.b[i]
		i++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			r.pos = i
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
}

// int reads a long that must fit 32 bits.
func (r *reader) int() (int32, error) {
	start := r.pos
	v, err := r.long()
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.pos = start
		return 0, r.fail(fmt.Errorf("int value %d does not fit 32 bits", v))
	}
	return int32(v), nil
}

// next returns the next n bytes.
func (r *reader) next(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.fail(fmt.Errorf("%w: want %d bytes, %d left", ErrShort, n, len(r.b)-r.pos))
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// lenBytes reads a length-prefixed byte string (bytes, string).
func (r *reader) lenBytes() ([]byte, error) {
	start := r.pos
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(len(r.b)-r.pos) {
		r.pos = start
		return nil, r.fail(fmt.Errorf("length %d beyond the %d bytes left", n, len(r.b)-r.pos))
	}
	return r.next(int(n))
}

func (r *reader) float32() (float32, error) {
	b, err := r.next(4)
	if err != nil {
		return 0, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
}

func (r *reader) float64() (float64, error) {
	b, err := r.next(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// blockCount reads an array or map block header: the item count (0 ends
// the value). A negative count is followed by the block's byte size, which
// is skipped over (the items are still decoded one by one).
func (r *reader) blockCount() (int64, error) {
	start := r.pos
	n, err := r.long()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		if n == math.MinInt64 {
			r.pos = start
			return 0, r.fail(errors.New("invalid block count"))
		}
		n = -n
		if _, err := r.long(); err != nil { // block size in bytes
			return 0, err
		}
	}
	if n > r.items {
		r.pos = start
		return 0, r.fail(fmt.Errorf("block of %d items: a record of %d bytes holds at most %d array and map items (its byte count plus %d)",
			n, len(r.b), int64(len(r.b))+FreeItems, FreeItems))
	}
	r.items -= n
	return n, nil
}
