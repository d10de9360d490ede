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
	n        atomic.Int64
	detached atomic.Bool
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
