package fileload

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

// Cuts move forward to the next line end: a line longer than the chunk
// makes a longer chunk, and the last chunk may lack a final newline.
func TestSplitChunksOnLineEnds(t *testing.T) {
	t.Parallel()
	data := "aa\nbbbbbbbbbb\nc\nd"
	got, err := SplitChunks(strings.NewReader(data), 0, int64(len(data)), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []Range{{0, 14}, {14, 17}} // cut at 4 falls in "bbbbbbbbbb\n"; the next cut (18) is past the end
	if !slices.Equal(got, want) {
		t.Fatalf("SplitChunks = %v, want %v", got, want)
	}
	if _, err := SplitChunks(strings.NewReader(data), 0, int64(len(data)), 0); err == nil {
		t.Fatal("chunk size 0 accepted")
	}
}

// A worker's body reads its pieces in order, decompresses a gzip file,
// and ends every file with a newline so two files' lines are never glued.
func TestBodyConcatenatesPiecesWithNewlines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeFile(t, dir, "a.csv", []byte("1\tx\n2\ty\n3\tz"))
	b := writeFile(t, dir, "b.csv.gz", []byte("4\tw"))
	files, err := statFiles([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !files[1].Gzip || files[0].Gzip {
		t.Fatalf("gzip detection: %+v", files)
	}
	pieces := []Piece{{File: 0, Range: Range{4, 12}}, {File: 1, Range: Range{0, files[1].Size}}}
	fired := 0
	body := newBody(context.Background(), files, pieces, nil, func() error { fired++; return nil })
	got, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "2\ty\n3\tz\n4\tw\n"; string(got) != want || body.sent != int64(len(want)) || fired != 1 {
		t.Fatalf("body %q (sent %d, mid-stream fired %d times), want %q, once", got, body.sent, fired, want)
	}
}

// planRound gives each worker a contiguous run of chunks, in file order,
// covering the input exactly once.
func TestPlanRoundContiguous(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files, err := statFiles([]string{
		csvFile(t, dir, "a.csv", 0, 100, true), csvFile(t, dir, "b.csv.gz", 100, 120, true), csvFile(t, dir, "c.csv", 120, 300, true),
	})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := planRound(files, Position{}, 4, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Workers) != 4 || rd.End != (Position{File: 3}) {
		t.Fatalf("round %+v: want 4 workers up to the end", rd)
	}
	next := Position{}
	for w, pcs := range rd.Workers {
		for _, p := range pcs {
			if p.File != next.File && !(p.File == next.File+1 && next.Offset == files[next.File].Size) {
				t.Fatalf("worker %d piece %+v does not follow %+v", w, p, next)
			}
			if p.File == next.File && p.Range.Start != next.Offset {
				t.Fatalf("worker %d piece %+v does not start at %+v", w, p, next)
			}
			next = Position{File: p.File, Offset: p.Range.End}
		}
	}
	if next.File != 2 || next.Offset != files[2].Size {
		t.Fatalf("pieces end at %+v, want the end of the last file", next)
	}
}
