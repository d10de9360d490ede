package doristest

// Behavior: an optional BE ingest model for benchmarks, off by default.
//   - WithLoadThroughput(bps): each Stream Load body is read no faster than
//     bps bytes per second of the server's Clock. After n bytes the reader
//     waits until start + n/bps (token-bucket with no burst beyond what was
//     already read); with a ManualClock it waits for Advance, so tests count
//     Advance steps instead of timing anything.
//   - WithBEConcurrentLoads(n): each BE serves at most n Stream Loads at
//     once; the next waits before its headers are processed (no reply, body
//     unread, no txn) until a slot frees, the client gives up, or Close. A
//     real BE has a fixed pool of libevent HTTP workers (be config
//     webserver_num_workers, default 48) and no "too many loads" answer on
//     the stream-load path was found in Doris source, so waiting is the
//     modelled behaviour.
//   - Only PUT /api/{db}/{table}/_stream_load counts; 2PC commit/abort and
//     error-log reads are never limited.

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"
)

// ingestModel holds the ingest-model options.
type ingestModel struct {
	bytesPerSec     int64 // 0: unlimited
	concurrentLoads int   // per BE; 0: unlimited
}

// isStreamLoadPath matches /api/{db}/{table}/_stream_load.
func isStreamLoadPath(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	return len(parts) == 4 && parts[0] == "api" && parts[3] == "_stream_load"
}

// loadSlots is a counting semaphore that reports its state changes.
type loadSlots struct {
	mu               sync.Mutex
	limit            int
	running, waiting int
	changed          chan struct{} // closed and replaced on every change
}

func newLoadSlots(limit int) *loadSlots {
	return &loadSlots{limit: limit, changed: make(chan struct{})}
}

func (l *loadSlots) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// acquire takes a slot, waiting while all are taken; it fails when ctx is
// done or stop is closed.
func (l *loadSlots) acquire(ctx context.Context, stop <-chan struct{}) error {
	l.mu.Lock()
	l.waiting++
	l.notifyLocked()
	for l.running >= l.limit {
		ch := l.changed
		l.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = ctx.Err()
		case <-stop:
			err = errServerClosed
		}
		l.mu.Lock()
		if err != nil {
			l.waiting--
			l.notifyLocked()
			l.mu.Unlock()
			return err
		}
	}
	l.waiting--
	l.running++
	l.notifyLocked()
	l.mu.Unlock()
	return nil
}

func (l *loadSlots) release() {
	l.mu.Lock()
	l.running--
	l.notifyLocked()
	l.mu.Unlock()
}

func (l *loadSlots) counts() (running, waiting int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running, l.waiting
}

// wait blocks until cond(running, waiting) holds or ctx is done.
func (l *loadSlots) wait(ctx context.Context, cond func(running, waiting int) bool) error {
	for {
		l.mu.Lock()
		ok, ch := cond(l.running, l.waiting), l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// throttledBody reads a load body no faster than bps bytes per second of
// clock time since start.
type throttledBody struct {
	rc    io.ReadCloser
	ctx   context.Context
	stop  <-chan struct{}
	clock Clock
	bps   int64
	start time.Time
	read  int64
}

// due is when n bytes may have been read.
func (t *throttledBody) due(n int64) time.Time {
	sec, rem := n/t.bps, n%t.bps
	return t.start.Add(time.Duration(sec)*time.Second + time.Duration(rem*int64(time.Second)/t.bps))
}

// Read passes through, then waits until the bytes read so far are due.
// Reads are capped at bps bytes so one Read never spans more than a second.
func (t *throttledBody) Read(p []byte) (int, error) {
	if int64(len(p)) > t.bps {
		p = p[:t.bps]
	}
	n, err := t.rc.Read(p)
	t.read += int64(n)
	if n > 0 {
		if werr := sleepOn(t.ctx, t.stop, t.clock, t.due(t.read)); werr != nil {
			return n, werr
		}
	}
	return n, err
}

func (t *throttledBody) Close() error { return t.rc.Close() }
