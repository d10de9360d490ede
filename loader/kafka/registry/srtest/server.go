package srtest

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Opt configures a Server.
type Opt func(*Server)

// WithAddr listens on addr (host:port) instead of 127.0.0.1:0.
func WithAddr(addr string) Opt { return func(s *Server) { s.addr = addr } }

// WithTLS serves https with cfg (a server certificate; ClientAuth for
// mutual TLS). Default: plain http.
func WithTLS(cfg *tls.Config) Opt { return func(s *Server) { s.tls = cfg } }

// WithBasicAuth makes every request need HTTP Basic user:pass (401
// otherwise). Default: no authentication.
func WithBasicAuth(user, pass string) Opt {
	return func(s *Server) { s.user, s.pass = user, pass }
}

// Server is an in-process Schema Registry on a local listener. Call Close.
type Server struct {
	addr, user, pass string
	tls              *tls.Config
	reg              *Registry
	ln               net.Listener
	http             *http.Server
	done             chan struct{}
	closeOnce        sync.Once
}

// NewServer starts a registry; URL says where.
func NewServer(opts ...Opt) (*Server, error) {
	s := &Server{addr: "127.0.0.1:0", reg: NewRegistry(), done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return nil, err
	}
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	s.ln = ln
	s.http = &http.Server{Handler: s.auth(s.reg), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// URL is the registry's base URL, http://host:port (https with WithTLS).
func (s *Server) URL() string {
	if s.tls != nil {
		return "https://" + s.ln.Addr().String()
	}
	return "http://" + s.ln.Addr().String()
}

// Registry returns the registry state and fault handles.
func (s *Server) Registry() *Registry { return s.reg }

// Close stops the server and waits for in-flight requests (at most 5 s).
// It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = s.http.Shutdown(ctx)
		<-s.done
		if errors.Is(err, context.DeadlineExceeded) {
			err = s.http.Close()
		}
	})
	return err
}

func (s *Server) auth(next http.Handler) http.Handler {
	if s.user == "" && s.pass == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(s.user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(s.pass)) != 1 {
			writeErr(w, &apiError{status: http.StatusUnauthorized, code: 401, msg: "Unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}
