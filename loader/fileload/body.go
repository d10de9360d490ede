package fileload

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

// bodyBuf is the read size of a worker's body: W workers hold W of them.
const bodyBuf = 1 << 20

// body is one worker's Stream Load body: its pieces in order, each read
// from its file (a gzip file decompressed), each ending in '\n'. It opens
// one file at a time and holds one buffer: memory is bounded whatever the
// file sizes. The first Read passes the mid-stream cut point.
type body struct {
	files  []File
	pieces []Piece
	next   int
	cur    io.Reader
	closer io.Closer
	buf    []byte
	// sent counts the bytes handed to the transport; progress too.
	sent     int64
	progress *Progress
	first    bool
	fire     func() error
	ctx      context.Context
}

func newBody(ctx context.Context, files []File, pieces []Piece, progress *Progress, fire func() error) *body {
	return &body{ctx: ctx, files: files, pieces: pieces, progress: progress, first: true, fire: fire}
}

// open moves to the next piece; io.EOF when there is none.
func (b *body) open() error {
	b.close()
	if b.next >= len(b.pieces) {
		return io.EOF
	}
	p := b.pieces[b.next]
	b.next++
	f := b.files[p.File]
	fh, err := os.Open(f.Path)
	if err != nil {
		return fmt.Errorf("read %s: %w", f.Path, err)
	}
	b.closer = fh
	if f.Gzip {
		zr, err := gzip.NewReader(bufio.NewReaderSize(fh, 256<<10))
		if err != nil {
			return fmt.Errorf("read %s: gzip: %w", f.Path, err)
		}
		b.cur = &newlineReader{r: &fileErr{r: zr, path: f.Path}}
		return nil
	}
	b.cur = &newlineReader{r: &fileErr{r: io.NewSectionReader(fh, p.Range.Start, p.Range.Len()), path: f.Path}}
	return nil
}

func (b *body) close() {
	if b.closer != nil {
		b.closer.Close()
		b.closer, b.cur = nil, nil
	}
}

// Read implements io.Reader.
func (b *body) Read(p []byte) (int, error) {
	for {
		if b.cur == nil {
			if err := b.open(); err != nil {
				return 0, err
			}
		}
		n, err := b.cur.Read(p)
		if n > 0 {
			if err := b.passFirst(); err != nil {
				return 0, err
			}
			b.count(n)
			return n, nil
		}
		if err == io.EOF {
			b.close()
			continue
		}
		if err != nil {
			return 0, err
		}
	}
}

// WriteTo streams the body to w in bodyBuf reads (fewer, larger chunks
// than the transport's 32 KiB copy).
func (b *body) WriteTo(w io.Writer) (int64, error) {
	if b.buf == nil {
		b.buf = make([]byte, bodyBuf)
	}
	var total int64
	for {
		n, err := io.ReadFull(b, b.buf)
		if n > 0 {
			m, werr := w.Write(b.buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		if cerr := b.ctx.Err(); cerr != nil {
			return total, cerr
		}
	}
}

func (b *body) passFirst() error {
	if !b.first {
		return nil
	}
	b.first = false
	if b.fire != nil {
		return b.fire()
	}
	return nil
}

func (b *body) count(n int) {
	b.sent += int64(n)
	if b.progress != nil {
		b.progress.Sent.Add(int64(n))
	}
}

// fileErr names the file in a read error.
type fileErr struct {
	r    io.Reader
	path string
}

func (f *fileErr) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("read %s: %w", f.path, err)
	}
	return n, err
}
