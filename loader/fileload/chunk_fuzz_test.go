package fileload

import (
	"bytes"
	"testing"
)

// FuzzSplitChunks: for any input and chunk size, the ranges cover the
// input exactly, in order, each non-empty, and every range but the last
// ends right after a '\n' (so no line is split); a range is longer than
// the chunk size only by the rest of the line it cut into.
func FuzzSplitChunks(f *testing.F) {
	f.Add([]byte("a\nbb\nccc\n"), int64(3), int64(0))
	f.Add([]byte("no newline at all"), int64(4), int64(0))
	f.Add([]byte("\n\n\n\n"), int64(1), int64(1))
	f.Add([]byte("{\"k\":1}\n{\"k\":2}\n{\"k\":3}"), int64(8), int64(8))
	f.Fuzz(func(t *testing.T, data []byte, chunk, start int64) {
		size := int64(len(data))
		if chunk <= 0 || chunk > 1<<20 || start < 0 || start > size {
			t.Skip()
		}
		got, err := SplitChunks(bytes.NewReader(data), start, size, chunk)
		if err != nil {
			t.Fatal(err)
		}
		checkCover(t, data, start, chunk, got)
	})
}

func checkCover(t *testing.T, data []byte, start, chunk int64, got []Range) {
	t.Helper()
	pos := start
	for i, r := range got {
		if r.Start != pos || r.End <= r.Start {
			t.Fatalf("range %d = %+v, want a non-empty range from %d (all %v)", i, r, pos, got)
		}
		last := i == len(got)-1
		if !last && data[r.End-1] != '\n' {
			t.Fatalf("range %d = %+v does not end after a newline: a line is split", i, r)
		}
		// The range ends at the first line end at or after its cut.
		if cut := r.Start + chunk; !last && cut < r.End && bytes.IndexByte(data[cut-1:r.End-1], '\n') >= 0 {
			t.Fatalf("range %d = %+v runs past the first line end after its cut at %d", i, r, cut)
		}
		pos = r.End
	}
	if pos != int64(len(data)) {
		t.Fatalf("ranges end at %d, input has %d bytes", pos, len(data))
	}
}
