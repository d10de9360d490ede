package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics (the private registry), /healthz (200 while the
// process runs), /readyz (200 once SetReady(true) while no connector is
// stalled; 503 before and while one is, the body saying why: "recovering"
// or the stall's table, duration, start and reason) and /status (Status
// as JSON).
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := m.notReady(); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("GET /status", m.serveStatus)
	return mux
}

// Server is the running metrics endpoint.
type Server struct {
	srv  *http.Server
	addr string
	done chan error
}

// Serve listens on addr and serves m.Handler until Close. The listen error
// is returned at once (a busy port names metrics.listen).
func Serve(addr string, m *Metrics, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen %s: %w", addr, err)
	}
	s := &Server{
		srv:  &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second},
		addr: ln.Addr().String(),
		done: make(chan error, 1),
	}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		if err != nil {
			log.Error("metrics endpoint stopped", "err", err)
		}
		s.done <- err
	}()
	return s, nil
}

// Addr is the address listened on (useful with port 0).
func (s *Server) Addr() string { return s.addr }

// Close stops the endpoint, waiting up to 5 s for open scrapes.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// writeJSON writes v indented; an encoding error (a client gone) is
// dropped, the response being already under way.
func writeJSON(w http.ResponseWriter, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
