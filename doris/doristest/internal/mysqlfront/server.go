package mysqlfront

import (
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/sqlexec"
)

// Server serves the Doris FE MySQL protocol over a Backend. Create it with
// New, run Serve on one or more listeners and call Close when done. It is
// safe for concurrent use; each connection is served by its own goroutine.
type Server struct {
	b    Backend
	cfg  config
	conf *server.Server // go-mysql settings: no TLS, no RSA keys

	engOnce sync.Once
	eng     *sqlexec.Engine
	engErr  error

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup

	onPanic func(r any, stack []byte) // tests: called with each recovered panic
}

// New returns a Server answering from b. It listens nowhere until Serve.
func New(b Backend, opts ...Option) *Server {
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	s := &Server{
		b:         b,
		cfg:       cfg,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[net.Conn]struct{}),
	}
	// mysql_native_password (what Doris FE offers) by default; see auth.go for
	// when a client is switched to mysql_clear_password.
	s.conf = server.NewServerWithAuth(cfg.serverVersion, mysql.DEFAULT_COLLATION_ID,
		mysql.AUTH_NATIVE_PASSWORD, nil, nil, authProvider{b: b})
	return s
}

// Serve accepts connections on l until l fails or the Server is closed, and
// serves each on its own goroutine. It returns nil after Close, otherwise
// the accept error. Serve takes ownership of l and closes it.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = l.Close()
		return nil
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		_ = l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// serveConn runs the handshake and the command loop of one connection.
func (s *Server) serveConn(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
		s.wg.Done()
	}()
	// The safety net: a panic while serving one client (go-mysql or this
	// package) closes that connection, never the process.
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			s.cfg.logger.Error("doristest mysql: panic while serving a connection; closing it",
				"remote", remoteOf(c), "panic", fmt.Sprint(r), "stack", string(stack))
			if s.onPanic != nil {
				s.onPanic(r, stack)
			}
		}
	}()
	g := newGuardConn(c, s.cfg.logger)
	sess := newSession(s)
	h := &connHandler{session: sess}
	conn, err := s.conf.NewCustomizedConn(g, authHandler{b: s.b, host: hostOf(c.RemoteAddr()), conn: h}, h)
	if err != nil {
		s.cfg.logger.Debug("mysql handshake failed", "remote", remoteOf(c), "err", err)
		return
	}
	g.commands.Store(true)
	sess.mu.Lock()
	sess.user = conn.GetUser()
	sess.host = hostOf(c.RemoteAddr())
	sess.connID = conn.ConnectionID()
	sess.loginTime = time.Now()
	sess.mu.Unlock()
	for !conn.Closed() {
		if err := conn.HandleCommand(); err != nil {
			return
		}
	}
}

// Close stops every listener given to Serve, closes live connections and
// waits for their goroutines. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	for l := range s.listeners {
		_ = l.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if s.eng != nil {
		return s.eng.Close()
	}
	return nil
}

// engine returns the SQL engine for SELECT, started on first use.
func (s *Server) engine() (*sqlexec.Engine, error) {
	s.engOnce.Do(func() {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			s.engErr = errors.New("server closed")
			return
		}
		s.eng, s.engErr = sqlexec.New()
	})
	return s.eng, s.engErr
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

func remoteOf(c net.Conn) string {
	if a := c.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}
