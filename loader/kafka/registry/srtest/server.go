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

	"github.com/doris-sink/doris-sink/doris/doristest/sandboxguard"
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
	s.http = &http.Server{Handler: s.guard(s.auth(s.reg)), ReadHeaderTimeout: 10 * time.Second}
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

// MaxRequestBytes bounds one request body of the sandbox registry: a schema
// is at most about 1 MiB in a Confluent registry (one record of _schemas).
const MaxRequestBytes = 16 << 20

// guard refuses what a web page could make a browser send to the sandbox
// (sandboxguard, the emulator's rules): a Host that is not a loopback name
// or the listen host (DNS rebinding) and a foreign Origin get 403; a POST
// or PUT whose Content-Type is not a registry JSON type (Confluent's
// application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json,
// application/json) gets 415, so a cross-site text/plain POST cannot
// register a schema; a body over MaxRequestBytes gets 413. franz-go's sr
// and curl as Confluent's docs write it pass.
func (s *Server) guard(next http.Handler) http.Handler {
	host := s.addr
	if h, _, err := net.SplitHostPort(s.addr); err == nil {
		host = h
	}
	return &sandboxguard.Guard{
		Hosts:       []string{host},
		AnyIP:       sandboxguard.IsUnspecified(host),
		BodyTypes:   []string{"application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json", "application/json"},
		BodyMethods: []string{http.MethodPut},
		MaxBody:     func(*http.Request) int64 { return MaxRequestBytes },
		Deny: func(w http.ResponseWriter, status int, msg string) {
			writeErr(w, &apiError{status: status, code: status * 100, msg: "srtest: " + msg})
		},
		Next: next,
	}
}
