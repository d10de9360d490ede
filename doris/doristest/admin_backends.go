package doristest

// Behavior: admin routes for several BEs (admin.go lists all routes).
//   - POST /be/{i}/down and /be/{i}/up call BEDownAt(i) / BEUpAt(i); an index
//     that is not a number or out of range is 404. /be/down and /be/up (in
//     admin.go) still mean every BE.
//   - GET /backends returns Backends() as JSON.

import (
	"fmt"
	"net/http"
	"strconv"
)

func (s *Server) adminBackendRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /be/{i}/down", s.adminBackend(func(i int) error { s.BEDownAt(i); return nil }))
	mux.HandleFunc("POST /be/{i}/up", s.adminBackend(s.BEUpAt))
	mux.HandleFunc("GET /backends", func(w http.ResponseWriter, r *http.Request) { adminJSON(w, s.Backends()) })
}

// adminBackend parses {i} and runs fn on that BE.
func (s *Server) adminBackend(fn func(i int) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw := r.PathValue("i")
		i, err := strconv.Atoi(raw)
		if err != nil || i < 0 || i >= len(s.bes) {
			adminErr(w, http.StatusNotFound, fmt.Errorf("no BE %q: the emulator has BEs 0..%d", raw, len(s.bes)-1))
			return
		}
		if err := fn(i); err != nil {
			adminErr(w, http.StatusConflict, err)
			return
		}
		adminJSON(w, struct{}{})
	}
}
