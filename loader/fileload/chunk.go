package fileload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Range is a half-open byte range [Start, End) of one file.
type Range struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Len returns End - Start.
func (r Range) Len() int64 { return r.End - r.Start }

// scanBuf is how much SplitChunks reads at a time looking for a line end.
const scanBuf = 64 << 10

// SplitChunks splits the size bytes of r, from start on, into ranges of
// about chunkBytes that end right after a '\n' (or at size): no line is
// split between two ranges. A line longer than chunkBytes makes its range
// longer. The ranges cover [start, size) exactly, in order. It reads only
// around each cut (a few KiB per chunk), never the whole input.
func SplitChunks(r io.ReaderAt, start, size, chunkBytes int64) ([]Range, error) {
	if chunkBytes <= 0 {
		return nil, fmt.Errorf("split chunks: chunk size %d must be positive", chunkBytes)
	}
	if start < 0 || start > size {
		return nil, fmt.Errorf("split chunks: start %d outside [0, %d]", start, size)
	}
	var out []Range
	buf := make([]byte, scanBuf)
	for pos := start; pos < size; {
		cut := pos + chunkBytes
		if cut >= size {
			out = append(out, Range{pos, size})
			break
		}
		end, err := lineEnd(r, cut-1, size, buf)
		if err != nil {
			return nil, fmt.Errorf("split chunks at byte %d: %w", cut, err)
		}
		out = append(out, Range{pos, end})
		pos = end
	}
	return out, nil
}

// lineEnd returns the offset right after the first '\n' at or after off,
// or size when there is none.
func lineEnd(r io.ReaderAt, off, size int64, buf []byte) (int64, error) {
	for off < size {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		off += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if n == 0 {
			return 0, fmt.Errorf("read at %d: %w", off, io.ErrUnexpectedEOF)
		}
	}
	return size, nil
}
