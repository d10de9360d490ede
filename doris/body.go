package doris

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// errBodyWithheld is what the FE redirect request's body returns: the FE
// step must never consume the caller's body (§1.2: the FE never takes it).
var errBodyWithheld = errors.New("doris: body withheld from FE redirect request")

// gateBody is the body of the FE redirect request. Go sends no body bytes
// while it waits for "100 Continue"; if ExpectContinueTimeout expires first,
// the transport calls Read, which blocks until the FE has answered (release)
// or the step's context ends, and then fails. It never yields a byte, so the
// real body is only ever given to the BE request.
type gateBody struct {
	ctx     context.Context
	done    chan struct{}
	once    sync.Once
	touched atomic.Bool // Read was called (the Expect timeout expired)
}

func newGateBody(ctx context.Context) *gateBody {
	return &gateBody{ctx: ctx, done: make(chan struct{})}
}

func (g *gateBody) Read([]byte) (int, error) {
	g.touched.Store(true)
	select {
	case <-g.done:
	case <-g.ctx.Done():
	}
	return 0, errBodyWithheld
}

func (g *gateBody) release() { g.once.Do(func() { close(g.done) }) }

// loadBody wraps the caller's body for the BE request. It counts bytes read,
// hides any Close method (the transport must not close the caller's reader),
// and after detach fails further reads, so the transport stops reading the
// caller's body once StreamLoad has returned.
type loadBody struct {
	r        io.Reader
	n        atomic.Int64 // bytes read from r (before any compression)
	detached atomic.Bool
	// comp and level compress what the transport reads (compress.go).
	comp  Compression
	level int
}

// newLoadBody wraps the caller's body of req.
func newLoadBody(req *LoadRequest, body io.Reader) *loadBody {
	return &loadBody{r: body, comp: req.Compression, level: req.CompressionLevel}
}

func (b *loadBody) Read(p []byte) (int, error) {
	if b.detached.Load() {
		return 0, errBodyWithheld
	}
	n, err := b.r.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (b *loadBody) detach() { b.detached.Store(true) }

// maxBodyWrite bounds one write of a body's WriteTo to the transport, so
// that detach is seen between writes of a large in-memory body.
const maxBodyWrite = 1 << 20

// bodyReader returns what the transport reads for lb: lb itself, or, when
// the caller's body implements io.WriterTo, lb with a WriteTo method (see
// loadBodyTo). Other bodies keep the transport's pooled copy buffer. A
// compressed load gets a fresh compressor over lb on each call (each BE
// attempt; another one is only made while no byte of lb was read).
func (b *loadBody) bodyReader() io.Reader {
	if b.comp != CompressNone {
		cb, err := newCompressedBody(b, b.comp, b.level)
		if err != nil {
			return errReader{err}
		}
		return cb
	}
	if wt, ok := b.r.(io.WriterTo); ok {
		return &loadBodyTo{loadBody: b, wt: wt}
	}
	return b
}

// loadBodyTo lets the transport's body copy use the caller's io.WriterTo:
// the loader's pipe hands over whole buffers, each sent as one chunk, with
// no copy through the transport's 32 KiB buffer. Bytes are counted when
// handed to the transport; after detach, writes fail.
type loadBodyTo struct {
	*loadBody
	wt io.WriterTo
}

func (b *loadBodyTo) WriteTo(w io.Writer) (int64, error) {
	return b.wt.WriteTo(&loadBodyWriter{b: b.loadBody, w: w})
}

// loadBodyWriter is the destination side of loadBody.WriteTo.
type loadBodyWriter struct {
	b *loadBody
	w io.Writer
}

func (lw *loadBodyWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if lw.b.detached.Load() {
			return n, errBodyWithheld
		}
		c := p[:min(len(p), maxBodyWrite)]
		lw.b.n.Add(int64(len(c)))
		m, err := lw.w.Write(c)
		n += m
		if err != nil {
			return n, err
		}
		p = p[len(c):]
	}
	return n, nil
}

// errReader fails every Read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
