package doristest

// Behavior: several BEs (WithBackends) behind one FE.
//   - Each BE is its own HTTP listener serving the same BE routes; all BEs
//     share the FE's catalog and transactions, so a txn begun through one BE
//     is committed or aborted through any (in Doris the txn lives on the FE:
//     GlobalTransactionMgr, docs/doris-facts.md §5).
//   - BEDownAt(i) closes BE i's listener and connections (a crash); BEUpAt(i)
//     listens on the same port again.
//   - The FE learns of that through its heartbeat: a change is seen once
//     heartbeat_interval_second (FE Config, default 5) has passed on the
//     server's Clock since it happened (max_backend_heartbeat_failure_
//     tolerance_count default 1: one failed heartbeat marks a BE dead). Until
//     then the FE keeps its old view (it still redirects to a BE that just
//     died). With a ManualClock nothing is noticed until Advance.
//   - The FE's 307 picks among the BEs it sees alive, round robin with one
//     shared index (fe LoadAction.selectLocalRedirectBackend:
//     BeSelectionPolicy.setEnableRoundRobin(true).needLoadAvailable(),
//     nextRoundRobinIndex = getLastSelectedBackendIndexAndUpdate()). When it
//     sees none alive it answers {"status":"FAILED","msg":"No backend
//     available for load, please check the status of your backends."}
//     (SystemInfoService.NO_BACKEND_LOAD_AVAILABLE_MSG; the FE appends
//     ", policy: <policy>", which the emulator leaves out).

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// maxBackends bounds WithBackends.
const maxBackends = 64

// Ports a real BE reports besides its HTTP port (be.conf defaults); the
// emulator listens on none of them.
const (
	beHeartbeatPort = 9050
	beBEPort        = 9060
	beBrpcPort      = 8060
)

// backend is one emulated BE.
type backend struct {
	idx   int
	id    int64 // BackendId
	ep    *endpoint
	slots *loadSlots // nil: no concurrent-load limit

	// Introspection counters (no Doris counterpart): Stream Load PUTs
	// this BE served and the body bytes it read for them, as sent on the
	// wire (compressed bodies counted compressed).
	loads, wireBytes atomic.Int64

	// Guarded by Server.beMu.
	up        bool      // the listener's real state
	changedAt time.Time // when up last changed (Server clock)
	prevView  bool      // what the FE saw before that change
	startedAt time.Time // LastStartTime
}

// BackendInfo is one BE as the emulator's FE sees it.
type BackendInfo struct {
	// Index is the BE's position (0-based), as in BEDownAt.
	Index int
	// ID is the BackendId shown by /rest/v1/system?path=//backends.
	ID int64
	// URL is the BE's HTTP base URL.
	URL string
	// Host and HTTPPort are what /api/backends reports as ip and http_port.
	Host     string
	HTTPPort int
	// Up reports whether the BE's listener is up right now.
	Up bool
	// Alive is the FE's view (heartbeat): it follows Up once
	// heartbeat_interval_second has passed since the last change.
	Alive bool
	// LoadsRunning and LoadsWaiting count Stream Loads holding or waiting
	// for one of the BE's load slots (WithBEConcurrentLoads; both 0 without
	// a limit).
	LoadsRunning, LoadsWaiting int
	// LoadsServed counts the Stream Load PUTs this BE has served since the
	// server started (each request with the load's headers, whatever its
	// outcome), and WireBytes the body bytes it read for them, as they
	// came over the connection (a compressed body counts its compressed
	// bytes). Emulator introspection: Doris has no such counter.
	LoadsServed, WireBytes int64
}

// startBackends creates and starts every BE listener.
func (s *Server) startBackends() error {
	host, port, err := splitPort(s.cfg.beAddr)
	if err != nil {
		return fmt.Errorf("doristest: ListenBE %q: %w", s.cfg.beAddr, err)
	}
	now := s.clock.Now()
	for i := 0; i < s.cfg.backends; i++ {
		b := &backend{idx: i, id: 10001 + int64(i), up: true, prevView: true, changedAt: now, startedAt: now}
		if n := s.cfg.ingest.concurrentLoads; n > 0 {
			b.slots = newLoadSlots(n)
		}
		name := "be"
		if s.cfg.backends > 1 {
			name = "be" + strconv.Itoa(i)
		}
		b.ep = &endpoint{name: name, host: urlHost(s.cfg.beAddr, s.cfg.beHost), handler: s.track(s.beHandler(b)), log: s.log, tls: s.cfg.tls, guarded: true}
		addr := s.cfg.beAddr
		if port != 0 {
			addr = net.JoinHostPort(host, strconv.Itoa(port+i))
		}
		if err := b.ep.start(addr); err != nil {
			s.stopBackends()
			return err
		}
		s.bes = append(s.bes, b)
	}
	return nil
}

// stopBackends closes every started BE listener.
func (s *Server) stopBackends() {
	for _, b := range s.bes {
		b.ep.stop()
	}
}

// splitPort splits host:port with a numeric port.
func splitPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q is not a number", p)
	}
	return host, port, nil
}

// beHandler is BE b's mux with its ingest model in front of Stream Load.
func (s *Server) beHandler(b *backend) http.Handler {
	mux := s.beMux()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && isStreamLoadPath(r.URL.Path) {
			b.loads.Add(1)
			// The wrapped bodies go on a shallow copy: net/http decides
			// whether to close the connection after an answer given before
			// the body was read by asserting the original request's Body
			// is its expectContinueReader. Replacing r.Body would make the
			// server send 100 Continue and read the body after a refusal
			// answered before it (Label Already Exists, the txn quota), so
			// the client would see its body taken by a load never begun.
			rc := *r
			r = &rc
			if r.Body != nil {
				r.Body = &countingBody{rc: r.Body, n: &b.wireBytes}
			}
			release, err := s.admitLoad(r, b)
			if err != nil {
				// The client went away or Close began while waiting.
				dropConn(w)
				return
			}
			defer release()
		}
		mux.ServeHTTP(w, r)
	})
}

// BEURLs returns every BE's HTTP base URL, BE 0 first.
func (s *Server) BEURLs() []string {
	out := make([]string, len(s.bes))
	for i, b := range s.bes {
		out[i] = b.ep.url()
	}
	return out
}

// BEDownAt takes BE i down: its listener and every open connection are
// closed (in-flight loads see a transport error; their txns stay as they
// were). The FE notices after heartbeat_interval_second on the server's
// Clock; until then it may still redirect there. It panics if i is out of
// range.
func (s *Server) BEDownAt(i int) {
	b := s.bes[i]
	b.ep.stop()
	s.setBEUp(b, false)
}

// BEUpAt listens again on BE i's port (a no-op when up); the FE sees it
// alive after heartbeat_interval_second. It fails after Close and panics if
// i is out of range.
func (s *Server) BEUpAt(i int) error {
	b := s.bes[i]
	if err := b.ep.restart(); err != nil {
		return err
	}
	s.setBEUp(b, true)
	return nil
}

// NumBackends is the number of BEs (WithBackends).
func (s *Server) NumBackends() int { return len(s.bes) }

// Backends returns every BE as the FE sees it now, BE 0 first.
func (s *Server) Backends() []BackendInfo {
	now := s.clock.Now()
	hb := s.heartbeatInterval()
	s.beMu.Lock()
	defer s.beMu.Unlock()
	out := make([]BackendInfo, len(s.bes))
	for i, b := range s.bes {
		u := b.ep.url()
		_, port, _ := splitPort(b.ep.hostPort())
		out[i] = BackendInfo{Index: i, ID: b.id, URL: u, Host: s.cfg.beHost, HTTPPort: port,
			Up: b.up, Alive: b.feAliveLocked(now, hb), LoadsServed: b.loads.Load(), WireBytes: b.wireBytes.Load()}
		if b.slots != nil {
			out[i].LoadsRunning, out[i].LoadsWaiting = b.slots.counts()
		}
	}
	return out
}

func (s *Server) setBEUp(b *backend, up bool) {
	now := s.clock.Now()
	hb := s.heartbeatInterval()
	s.beMu.Lock()
	defer s.beMu.Unlock()
	if b.up == up {
		return
	}
	b.prevView = b.feAliveLocked(now, hb)
	b.up, b.changedAt = up, now
	if up {
		b.startedAt = now
	}
}

// feAliveLocked is the FE's heartbeat view of b at now. Callers hold beMu.
func (b *backend) feAliveLocked(now time.Time, hb time.Duration) bool {
	if now.Sub(b.changedAt) >= hb {
		return b.up
	}
	return b.prevView
}

func (s *Server) heartbeatInterval() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.feConf(ConfHeartbeatInterval)) * time.Second
}

// noBackendMsg is SystemInfoService.NO_BACKEND_LOAD_AVAILABLE_MSG (Doris
// 2.1+ wording; older FEs said "No backend load available.").
const noBackendMsg = "No backend available for load, please check the status of your backends."

// pickBackend chooses the BE for the FE's 307: round robin over the BEs the
// FE sees alive. It returns nil when it sees none.
func (s *Server) pickBackend() *backend {
	now := s.clock.Now()
	hb := s.heartbeatInterval()
	s.beMu.Lock()
	defer s.beMu.Unlock()
	alive := make([]*backend, 0, len(s.bes))
	for _, b := range s.bes {
		if b.feAliveLocked(now, hb) {
			alive = append(alive, b)
		}
	}
	if len(alive) == 0 {
		return nil
	}
	b := alive[s.rr%uint64(len(alive))]
	s.rr++
	return b
}

// admitLoad applies BE b's concurrent-load limit and the per-load
// throughput ceiling to a Stream Load; call release when the load is done.
func (s *Server) admitLoad(r *http.Request, b *backend) (release func(), err error) {
	release = func() {}
	if b.slots != nil {
		if err := b.slots.acquire(r.Context(), s.done); err != nil {
			return nil, err
		}
		release = b.slots.release
	}
	if bps := s.cfg.ingest.bytesPerSec; bps > 0 && r.Body != nil {
		r.Body = &throttledBody{rc: r.Body, ctx: r.Context(), stop: s.done, clock: s.clock, bps: bps, start: s.clock.Now()}
	}
	return release, nil
}

// waitBackends blocks until cond holds for BE i's slot counts or ctx ends.
func (s *Server) waitBackends(ctx context.Context, i int, cond func(running, waiting int) bool) error {
	sl := s.bes[i].slots
	if sl == nil {
		return fmt.Errorf("doristest: BE %d has no concurrent-load limit", i)
	}
	return sl.wait(ctx, cond)
}

// countingBody adds the bytes read from a load body to n.
type countingBody struct {
	rc io.ReadCloser
	n  *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	k, err := c.rc.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func (c *countingBody) Close() error { return c.rc.Close() }

// WireBytes sums BackendInfo.WireBytes over every BE: the Stream Load body
// bytes the emulator has received since it started, as sent (compressed
// bodies count compressed).
func (s *Server) WireBytes() int64 {
	var n int64
	for _, b := range s.bes {
		n += b.wireBytes.Load()
	}
	return n
}
