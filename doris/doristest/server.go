// Package doristest is an in-process Apache Doris for tests: an FE (HTTP
// Stream Load front door with 307 redirects, get_load_state, and the MySQL
// protocol), a BE (Stream Load, two-phase commit, error logs) and an admin
// endpoint, all on loopback, following docs/doris-facts.md. It is shaped like
// net/http/httptest and franz-go's kfake: NewServer starts everything, Close
// stops it, state readers (Rows, TxnByLabel, LabelState, …) and faults
// (Fault, BEDown, TimeoutPrecommitted, …) drive tests, and the admin HTTP
// endpoint exposes the same controls to subprocesses (docs/emulator.md).
//
// What is and is not emulated is listed in docs/emulator.md.
package doristest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/mysqlfront"
)

// Host names used in URLs by default. FE and BE differ so that Go's
// http.Client drops Authorization on the 307 like it does in production
// (net/http shouldCopyHeaderOnRedirect); URLHost makes them one.
const (
	feHost = "localhost"
	beHost = "127.0.0.1"
)

// errServerClosed is returned by waits that Close ended.
var errServerClosed = errors.New("doristest: server closed")

// Server is an emulated Doris cluster with one FE and one or more BEs
// (WithBackends). Create it with
// NewServer and call Close when done. All methods are safe for concurrent
// use. The zero value is not usable.
type Server struct {
	cfg   cfg
	log   *slog.Logger
	clock Clock
	users map[string]string

	// mu guards everything below: the catalog, transactions, FE config and
	// error logs. It is never held while reading a body or waiting on a fault.
	mu          sync.Mutex
	conf        map[string]int64
	dbs         map[string]*database
	nextID      int64 // db and table ids
	nextTxnID   int64
	holdPublish bool
	commitSeq   int64 // last commit's sequence number (txn.commitSeq)
	errorLogs   map[string]string
	nextErrLog  int64

	faults faultSet

	fe, admin  *endpoint
	bes        []*backend // BE i is bes[i]; see backends.go
	beMu       sync.Mutex // guards the backends' liveness state and rr
	rr         uint64     // FE round-robin index (LoadAction.getLastSelectedBackendIndexAndUpdate)
	adminToken string

	mysql     *mysqlfront.Server
	mysqlAddr string

	inflight  sync.WaitGroup
	done      chan struct{}
	closeOnce sync.Once
}

// NewServer starts an emulated Doris on loopback (ephemeral ports unless
// options say otherwise). Call Close when done.
func NewServer(opts ...Opt) (*Server, error) {
	c := defaultCfg()
	for _, o := range opts {
		o.apply(&c)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       c,
		log:       c.logger,
		clock:     c.clock,
		users:     maps.Clone(c.users),
		conf:      maps.Clone(c.feConfig),
		dbs:       map[string]*database{},
		nextID:    10000,
		nextTxnID: c.firstTxnID - 1,
		errorLogs: map[string]string{},
		faults:    faultSet{all: map[int64]*fault{}},
		done:      make(chan struct{}),
	}
	s.holdPublish = c.holdPublish
	for _, db := range c.databases {
		if err := s.CreateDatabase(db); err != nil {
			return nil, fmt.Errorf("doristest: seed database: %w", err)
		}
	}
	s.fe = &endpoint{name: "fe", host: urlHost(c.feAddr, c.feHost), handler: s.track(s.feMux()), log: s.log, tls: c.tls, guarded: true}
	if err := s.fe.start(c.feAddr); err != nil {
		return nil, err
	}
	if err := s.startBackends(); err != nil {
		s.fe.stop()
		return nil, err
	}
	if !c.noAdmin {
		s.adminToken = c.adminToken
		if s.adminToken == "" && !isLoopbackHost(listenHost(c.adminAddr)) {
			tok, err := newAdminToken()
			if err != nil {
				s.fe.stop()
				s.stopBackends()
				return nil, err
			}
			s.adminToken = tok
		}
		guard := adminGuard{bindHost: listenHost(c.adminAddr), token: s.adminToken, next: s.adminMux()}
		s.admin = &endpoint{name: "admin", host: urlHost(c.adminAddr, beHost), handler: s.track(guard), log: s.log}
		if err := s.admin.start(c.adminAddr); err != nil {
			s.fe.stop()
			s.stopBackends()
			return nil, err
		}
	}
	if !c.noMySQL {
		if err := s.startMySQL(c.mysqlAddr); err != nil {
			s.Close()
			return nil, err
		}
	}
	s.warnExposed()
	return s, nil
}

// urlHost is the host put into an endpoint's URL: dflt on loopback, else
// the configured host, or "" when there is none (endpoint.start then uses
// the listener's address).
func urlHost(addr, dflt string) string {
	h := listenHost(addr)
	if isLoopbackHost(h) {
		return dflt
	}
	return h
}

// exposedAddr is addr (as listened on, resolved port) with the host the
// caller configured when that names one (Go reports 0.0.0.0 as [::]).
func exposedAddr(configured, resolved string) string {
	h := listenHost(configured)
	_, port, err := net.SplitHostPort(resolved)
	if h == "" || isLoopbackHost(h) || err != nil {
		return resolved
	}
	return net.JoinHostPort(h, port)
}

// warnExposed logs every listener off loopback (AllowNonLoopback).
func (s *Server) warnExposed() {
	var exposed []any
	add := func(name, addr string) {
		if addr != "" && !isLoopbackHost(listenHost(addr)) {
			exposed = append(exposed, name, addr)
		}
	}
	endpoints := []*endpoint{s.fe, s.admin}
	for _, b := range s.bes {
		endpoints = append(endpoints, b.ep)
	}
	for _, e := range endpoints {
		if e != nil {
			_, port, _ := net.SplitHostPort(e.listenAddr())
			add(e.name, net.JoinHostPort(e.host, port))
		}
	}
	add("mysql", s.MySQLAddr())
	if len(exposed) > 0 {
		s.log.Warn("doristest: LISTENING OFF LOOPBACK: anyone who can reach these ports can load, read and drop "+
			"data and log in as the configured users; the admin endpoint requires its bearer token", exposed...)
	}
}

// AdminToken is the bearer token the admin endpoint requires: the one given
// with the AdminToken option, or the one generated because the endpoint
// listens off loopback; "" when none is required.
func (s *Server) AdminToken() string { return s.adminToken }

// track counts in-flight requests so Close can wait for them.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		h.ServeHTTP(w, r)
	})
}

// FEURL is the FE HTTP base URL, e.g. "http://localhost:8030" (host name
// "localhost" unless URLHost; https with WithTLS).
func (s *Server) FEURL() string { return s.fe.url() }

// BEURL is the HTTP base URL of BE 0, e.g. "http://127.0.0.1:8040" (https
// with WithTLS). BEURLs lists every BE.
func (s *Server) BEURL() string { return s.bes[0].ep.url() }

// AdminURL is the admin endpoint's base URL ("" with WithoutAdmin).
func (s *Server) AdminURL() string {
	if s.admin == nil {
		return ""
	}
	return s.admin.url()
}

// MySQLAddr is the FE MySQL protocol address ("host:port"), or "" when the
// MySQL front is not running.
func (s *Server) MySQLAddr() string {
	if s.mysql == nil {
		return ""
	}
	return s.mysqlAddr
}

// BEDown takes every BE down (BEDownAt for each). With one BE this is the
// whole cluster's load path.
func (s *Server) BEDown() {
	for i := range s.bes {
		s.BEDownAt(i)
	}
}

// BEUp brings every BE back (BEUpAt for each); the first error is returned.
func (s *Server) BEUp() error {
	var first error
	for i := range s.bes {
		if err := s.BEUpAt(i); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// FEDown makes the FE HTTP port refuse connections.
func (s *Server) FEDown() { s.fe.stop() }

// FEUp listens again on the FE's HTTP port.
func (s *Server) FEUp() error { return s.fe.restart() }

// Close shuts everything down and waits for in-flight requests (logging
// what it waits on every 5 s): listeners close at once, requests already
// being served run to the end, blocked faults are released (their calls act
// as Refuse). BEUp and FEUp fail afterwards. Close is idempotent; a second
// call returns at once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		waited := make(chan struct{})
		go func() {
			defer close(waited)
			var wg sync.WaitGroup
			eps := []*endpoint{s.fe, s.admin}
			for _, b := range s.bes {
				eps = append(eps, b.ep)
			}
			for _, e := range eps {
				if e != nil {
					wg.Go(e.shutdown)
				}
			}
			if s.mysql != nil {
				wg.Go(func() {
					if err := s.mysql.Close(); err != nil {
						s.log.Warn("doristest: close mysql front", "err", err)
					}
				})
			}
			wg.Wait()
			// Handlers of an endpoint stopped by BEDown/FEDown may still run.
			s.inflight.Wait()
		}()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-waited:
				return
			case <-t.C:
				s.log.Warn("doristest: Close is waiting for in-flight requests")
			}
		}
	})
}

// endpoint is one HTTP listener that can go down and come back on the same
// port.
type endpoint struct {
	name    string
	host    string
	handler http.Handler
	log     *slog.Logger
	tls     *tls.Config // nil: plain HTTP
	// guarded puts sandboxGuard in front of handler (FE and BE; the admin
	// endpoint has its own, adminGuard).
	guarded bool

	mu     sync.Mutex
	addr   string // resolved host:port, fixed after the first start
	srv    *http.Server
	ln     net.Listener
	closed bool // shut down for good: restart fails
}

func (e *endpoint) start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("doristest: listen %s on %s: %w", e.name, addr, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.addr = ln.Addr().String()
	if e.host == "" {
		e.host = listenHost(e.addr)
	}
	e.serve(ln)
	return nil
}

// listenAddr is the resolved listen address.
func (e *endpoint) listenAddr() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addr
}

func (e *endpoint) serve(ln net.Listener) {
	h := e.handler
	if e.guarded {
		h = sandboxGuard(e.host, listenHost(e.addr), h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute, ErrorLog: slog.NewLogLogger(e.log.Handler(), slog.LevelDebug)}
	e.srv, e.ln = srv, ln
	if e.tls != nil {
		ln = tls.NewListener(ln, e.tls)
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Warn("doristest: serve", "endpoint", e.name, "err", err)
		}
	}()
}

func (e *endpoint) url() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, port, _ := net.SplitHostPort(e.addr)
	scheme := "http"
	if e.tls != nil {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(e.host, port)
}

// hostPort is the resolved listen address.
func (e *endpoint) hostPort() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addr
}

// stop closes the listener and all connections at once (a crash). The
// listener is closed synchronously so that a dial right after stop is
// refused.
func (e *endpoint) stop() {
	e.mu.Lock()
	srv, ln := e.srv, e.ln
	e.srv, e.ln = nil, nil
	e.mu.Unlock()
	if srv != nil {
		_ = ln.Close()
		_ = srv.Close()
	}
}

// restart listens again on the same address; a no-op when up, an error
// after shutdown.
func (e *endpoint) restart() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("doristest: restart %s: server closed", e.name)
	}
	if e.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", e.addr)
	if err != nil {
		return fmt.Errorf("doristest: relisten %s on %s: %w", e.name, e.addr, err)
	}
	e.serve(ln)
	return nil
}

// shutdown stops accepting for good and waits for active connections to go
// idle.
func (e *endpoint) shutdown() {
	e.mu.Lock()
	srv, ln := e.srv, e.ln
	e.srv, e.ln, e.closed = nil, nil, true
	e.mu.Unlock()
	if srv != nil {
		_ = ln.Close()
		_ = srv.Shutdown(context.Background())
	}
}

// dropConn closes the request's connection without a reply.
func dropConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server closes the connection
	}
	_ = conn.Close()
}

// basicAuth parses the Authorization header.
func basicAuth(r *http.Request) (user, password string, ok bool) {
	return r.BasicAuth()
}

// clientIP is the request's remote IP.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return strings.TrimPrefix(host, "::ffff:")
}
