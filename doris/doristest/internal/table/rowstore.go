package table

import (
	"encoding/binary"
	"fmt"
	"math"
)

// rowStore holds Duplicate-table rows compactly: each row is encoded
// (encodeRow) into large byte chunks, and refs locates each row. A row costs
// about its text size plus 8 bytes, where a [][]any row costs some 200 bytes
// of headers and boxed values; this is what keeps the emulator's resident
// memory within a small multiple of the data loaded (issue 9 item 7).
//
// A store is append-only: bytes once written are never changed, so a view
// (a copy of the struct) stays valid while rows are appended after it.
// Removing rows (DELETE, schema change) builds a new store.
type rowStore struct {
	chunks [][]byte
	refs   []uint64 // chunk index << 32 | offset
}

// chunkSize is the size of a store chunk; a longer row gets its own chunk.
const chunkSize = 1 << 20

// Value tags of the row encoding.
const (
	tagNull byte = iota
	tagInt
	tagFloat
	tagString
)

// appendValue encodes one value (nil, int64, float64 or string).
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, tagNull)
	case int64:
		b = append(b, tagInt)
		return binary.AppendVarint(b, x)
	case float64:
		b = append(b, tagFloat)
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	case string:
		b = append(b, tagString)
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...)
	}
	// Not produced by convert; kept as text rather than lost.
	return appendValue(b, fmt.Sprint(v))
}

// encodeRow appends the encoding of row to b.
func encodeRow(b []byte, row []any) []byte {
	for _, v := range row {
		b = appendValue(b, v)
	}
	return b
}

// decodeRow decodes n values from b into dst (reused when large enough).
func decodeRow(b []byte, n int, dst []any) []any {
	if cap(dst) < n {
		dst = make([]any, n)
	}
	dst = dst[:n]
	for i := range n {
		tag := b[0]
		b = b[1:]
		switch tag {
		case tagNull:
			dst[i] = nil
		case tagInt:
			v, k := binary.Varint(b)
			dst[i], b = v, b[k:]
		case tagFloat:
			dst[i], b = math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:]
		case tagString:
			l, k := binary.Uvarint(b)
			b = b[k:]
			dst[i], b = string(b[:l]), b[l:]
		}
	}
	return dst
}

// add appends one encoded row.
func (s *rowStore) add(enc []byte) { s.refs = append(s.refs, s.addRaw(enc)) }

// addRaw stores enc in the chunks and returns its ref without listing it
// in refs (the keyed store indexes records itself).
func (s *rowStore) addRaw(enc []byte) uint64 {
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+len(enc) > cap(s.chunks[last]) {
		s.chunks = append(s.chunks, make([]byte, 0, max(chunkSize, len(enc))))
		last++
	}
	c := s.chunks[last]
	ref := uint64(last)<<32 | uint64(len(c))
	s.chunks[last] = append(c, enc...)
	return ref
}

// at returns the bytes from ref to the end of its chunk.
func (s *rowStore) at(ref uint64) []byte { return s.chunks[ref>>32][uint32(ref):] }

// addRow encodes and appends row, using scratch as the encoding buffer.
func (s *rowStore) addRow(row []any, scratch []byte) []byte {
	scratch = encodeRow(scratch[:0], row)
	s.add(scratch)
	return scratch
}

// len is the number of rows.
func (s *rowStore) len() int { return len(s.refs) }

// row decodes row i (n columns) into dst.
func (s *rowStore) row(i, n int, dst []any) []any {
	return decodeRow(s.at(s.refs[i]), n, dst)
}

// view returns a copy that later appends do not change.
func (s *rowStore) view() rowStore {
	v := rowStore{chunks: make([][]byte, len(s.chunks)), refs: s.refs[:len(s.refs):len(s.refs)]}
	copy(v.chunks, s.chunks)
	return v
}

// appendStore appends every row of o (whose chunks it adopts, no copy).
func (s *rowStore) appendStore(o *rowStore) {
	base := uint64(len(s.chunks))
	s.chunks = append(s.chunks, o.chunks...)
	for _, r := range o.refs {
		s.refs = append(s.refs, r+base<<32)
	}
}

// skipValue returns b past its first encoded value.
func skipValue(b []byte) []byte {
	tag := b[0]
	b = b[1:]
	switch tag {
	case tagInt:
		_, k := binary.Varint(b)
		return b[k:]
	case tagFloat:
		return b[8:]
	case tagString:
		l, k := binary.Uvarint(b)
		return b[uint64(k)+l:]
	}
	return b
}

// value decodes column col of row i without decoding the others.
func (s *rowStore) value(i, col int) any { return valueAt(s.at(s.refs[i]), col) }

// valueAt decodes value col of the encoded values in b.
func valueAt(b []byte, col int) any {
	for range col {
		b = skipValue(b)
	}
	var v [1]any
	decodeRow(b, 1, v[:])
	return v[0]
}
