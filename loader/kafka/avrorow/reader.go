package avrorow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// maxBlockItems bounds the item count one array or map block may claim,
// so a corrupt count fails instead of looping for ages.
const maxBlockItems = 1 << 30

// reader reads the Avro binary encoding from b.
type reader struct {
	b   []byte
	pos int
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
	if n > maxBlockItems || n > int64(len(r.b)-r.pos)+1 && n > 1<<20 {
		r.pos = start
		return 0, r.fail(fmt.Errorf("block of %d items cannot fit the %d bytes left", n, len(r.b)-r.pos))
	}
	return n, nil
}
