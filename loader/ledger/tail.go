package ledger

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// tailChunk is how much repair reads at a time, backwards from the end.
const tailChunk = 64 << 10

// lastNewline returns the offset of the last '\n' in f[0:end), -1 if none.
func lastNewline(f *os.File, end int64) (int64, error) {
	buf := make([]byte, tailChunk)
	for end > 0 {
		start := max(end-tailChunk, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, fmt.Errorf("read ledger %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i), nil
		}
		end = start
	}
	return -1, nil
}

// countLines returns the number of '\n' in f[0:end).
func countLines(f *os.File, end int64) (int, error) {
	n := 0
	buf := make([]byte, tailChunk)
	for off := int64(0); off < end; {
		b := buf[:min(tailChunk, end-off)]
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return 0, fmt.Errorf("read ledger %s: %w", f.Name(), err)
		}
		n += bytes.Count(b, []byte{'\n'})
		off += int64(len(b))
	}
	return n, nil
}

// repair cuts a torn last line off f (size bytes long) and checks that the
// last complete line parses. It returns the new size and the torn tail cut,
// nil if none. It reads only the tail (plus a line count when it finds
// something to report), so opening a long ledger stays fast.
func repair(f *os.File, size int64) (int64, *TornTail, error) {
	nl, err := lastNewline(f, size)
	if err != nil {
		return 0, nil, err
	}
	var torn *TornTail
	if keep := nl + 1; keep < size {
		n, err := countLines(f, keep)
		if err != nil {
			return 0, nil, err
		}
		torn = &TornTail{Line: n + 1, Offset: keep, Bytes: size - keep}
		if err := f.Truncate(keep); err != nil {
			return 0, nil, fmt.Errorf("cut torn tail of ledger %s: %w", f.Name(), err)
		}
		if err := f.Sync(); err != nil {
			return 0, nil, fmt.Errorf("fsync ledger %s: %w", f.Name(), err)
		}
		size = keep
	}
	if size == 0 {
		return 0, torn, nil
	}
	prev, err := lastNewline(f, size-1)
	if err != nil {
		return 0, nil, err
	}
	line := make([]byte, size-1-(prev+1))
	if _, err := f.ReadAt(line, prev+1); err != nil && err != io.EOF {
		return 0, nil, fmt.Errorf("read ledger %s: %w", f.Name(), err)
	}
	if _, perr := parseLine(line); perr != nil {
		n, err := countLines(f, size)
		if err != nil {
			return 0, nil, err
		}
		return 0, nil, &LineError{Path: f.Name(), Line: n, Err: perr}
	}
	return size, torn, nil
}
