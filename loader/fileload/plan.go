package fileload

import (
	"fmt"
	"os"
)

// Position is a point in the file list: byte Offset of file File. The end
// of the load is {File: len(files)}. Offsets are raw file offsets; a gzip
// file is at 0 or done.
type Position struct {
	File   int   `json:"file"`
	Offset int64 `json:"offset"`
}

// Piece is one worker's range of one file.
type Piece struct {
	File  int `json:"file"`
	Range Range
}

// Round is one atomic part of the load: the pieces each worker streams
// into its txn, covering [Start, End) of the file list contiguously in
// worker order.
type Round struct {
	Start, End Position
	// Workers[w] are worker w's pieces, in file order; every worker has at
	// least one.
	Workers [][]Piece
	// Bytes is the file bytes the round covers (gzip: compressed).
	Bytes int64
}

// gzipRatio is the decompressed/compressed size assumed for a gzip file
// when estimating how long a round streams.
const gzipRatio = 5

// estBytes is the streamed size assumed for n file bytes.
func estBytes(f File, n int64) int64 {
	if f.Gzip {
		return n * gzipRatio
	}
	return n
}

// remaining returns the estimated streamed bytes from p to the end.
func remaining(files []File, p Position) int64 {
	var n int64
	for i := p.File; i < len(files); i++ {
		off := int64(0)
		if i == p.File {
			off = p.Offset
		}
		n += estBytes(files[i], files[i].Size-off)
	}
	return n
}

// planRound plans the round that starts at p: chunks of chunkBytes (0:
// auto) on line boundaries until budget estimated bytes (≤0: no bound) are
// covered, spread over at most workers workers in contiguous runs of about
// equal size. It reads only around each chunk cut.
func planRound(files []File, p Position, workers int, chunkBytes, budget int64) (*Round, error) {
	total := remaining(files, p)
	if budget > 0 {
		total = min(total, budget)
	}
	if chunkBytes <= 0 {
		chunkBytes = min(max(total/int64(4*workers), 1<<20), 256<<20)
	}
	type chunk struct {
		piece Piece
		est   int64
	}
	var chunks []chunk
	var sum int64
	end := p
	for i := p.File; i < len(files) && (budget <= 0 || sum < budget); i++ {
		f := files[i]
		off := int64(0)
		if i == p.File {
			off = p.Offset
		}
		var ranges []Range
		if f.Gzip || off >= f.Size {
			if off < f.Size {
				ranges = []Range{{0, f.Size}}
			}
		} else {
			fh, err := os.Open(f.Path)
			if err != nil {
				return nil, fmt.Errorf("plan: %w", err)
			}
			ranges, err = SplitChunks(fh, off, f.Size, chunkBytes)
			fh.Close()
			if err != nil {
				return nil, fmt.Errorf("plan %s: %w", f.Path, err)
			}
		}
		end = Position{File: i + 1}
		for _, r := range ranges {
			if budget > 0 && sum >= budget {
				end = Position{File: i, Offset: r.Start}
				break
			}
			e := estBytes(f, r.Len())
			chunks = append(chunks, chunk{Piece{File: i, Range: r}, e})
			sum += e
		}
	}
	rd := &Round{Start: p, End: end}
	if len(chunks) == 0 {
		return rd, nil
	}
	// Contiguous assignment: chunk c goes to the worker whose share of the
	// estimated bytes holds the chunk's middle.
	w := make([][]Piece, workers)
	var cum int64
	for _, c := range chunks {
		idx := min(int((cum+c.est/2)*int64(workers)/sum), workers-1)
		w[idx] = append(w[idx], c.piece)
		cum += c.est
		rd.Bytes += c.piece.Range.Len()
	}
	for _, pcs := range w {
		if len(pcs) > 0 {
			rd.Workers = append(rd.Workers, pcs)
		}
	}
	return rd, nil
}
