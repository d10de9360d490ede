package doristest

// Behavior: the admin HTTP endpoint (emulator only, its own listener,
// AdminURL) drives the same Go API with JSON, for subprocess tests. Replies
// are JSON; errors are {"error":"..."} with 400 (bad request), 404 (unknown
// thing) or 409 (not possible now); admin_guard.go first refuses foreign
// hosts and origins (403), POSTs without Content-Type application/json (415)
// and a missing token (401). Routes (docs/emulator.md has examples):
//
//	POST   /faults                       body: Fault              → {"id":N}
//	GET    /faults                                                → [FaultInfo]
//	GET    /faults/{id}                                           → FaultInfo
//	POST   /faults/{id}/wait            body {"hits":N}           → FaultInfo (FaultHandle.Wait)
//	DELETE /faults/{id}                                           → {}
//	POST   /faults/{id}/release                                   → {}
//	POST   /be/down | /be/up | /fe/down | /fe/up                  → {} (/be/*: every BE)
//	POST   /be/{i}/down | /be/{i}/up    (BEDownAt/BEUpAt)         → {}
//	GET    /backends                                              → [BackendInfo]
//	POST   /txns/timeout-precommitted                             → {"aborted":N}
//	GET    /txns?db=D                                             → [Transaction]
//	GET    /labels/{db}/{label}                                   → {"state":S} (LabelState)
//	POST   /labels/expire?db=D          (no db = all)             → {"removed":N}
//	POST   /clock/advance               body {"seconds":S}        → {"now":"RFC3339"} (ManualClock only)
//	POST   /cleaner/run                                           → {}
//	GET    /config                                                → {"key":value,...}
//	POST   /config                      body {"key":K,"value":V}  → {}
//	POST   /publish                     body {"hold":bool}        → {}
//	POST   /databases/{db}                                        → {}
//	POST   /databases/{db}/tables       body {"ddl":"CREATE ..."} → {}
//	GET    /tables/{db}/{table}/rows                              → [[values]]
//	POST   /tables/{db}/{table}/counting body {"on":bool}         → {}
//	GET    /tables/{db}/{table}/counts                            → {"rows":N,"bytes":N}

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

func (s *Server) adminMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /faults", s.adminAddFault)
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, r *http.Request) { adminJSON(w, s.Faults()) })
	mux.HandleFunc("GET /faults/{id}", s.adminFault(func(w http.ResponseWriter, _ *http.Request, h *FaultHandle) {
		adminJSON(w, h.info())
	}))
	mux.HandleFunc("POST /faults/{id}/wait", s.adminFault(s.adminWaitFault))
	mux.HandleFunc("DELETE /faults/{id}", s.adminFaultOp(func(h *FaultHandle) { h.Remove() }))
	mux.HandleFunc("POST /faults/{id}/release", s.adminFaultOp(func(h *FaultHandle) { h.Release() }))
	mux.HandleFunc("POST /be/down", s.adminDo(func() error { s.BEDown(); return nil }))
	mux.HandleFunc("POST /be/up", s.adminDo(s.BEUp))
	mux.HandleFunc("POST /fe/down", s.adminDo(func() error { s.FEDown(); return nil }))
	mux.HandleFunc("POST /fe/up", s.adminDo(s.FEUp))
	s.adminBackendRoutes(mux)
	mux.HandleFunc("POST /txns/timeout-precommitted", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(w, map[string]int{"aborted": s.TimeoutPrecommitted()})
	})
	mux.HandleFunc("GET /txns", func(w http.ResponseWriter, r *http.Request) {
		ts, err := s.Txns(r.URL.Query().Get("db"))
		if err != nil {
			adminErr(w, http.StatusNotFound, err)
			return
		}
		adminJSON(w, ts)
	})
	mux.HandleFunc("GET /labels/{db}/{label}", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(w, map[string]doris.TxnStatus{"state": s.LabelState(r.PathValue("db"), r.PathValue("label"))})
	})
	mux.HandleFunc("POST /labels/expire", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(w, map[string]int{"removed": s.ExpireLabels(r.URL.Query().Get("db"))})
	})
	mux.HandleFunc("POST /clock/advance", s.adminAdvance)
	mux.HandleFunc("POST /cleaner/run", s.adminDo(func() error { s.RunCleaner(); return nil }))
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, r *http.Request) {
		out := map[string]int64{}
		for _, k := range FEConfigKeys() {
			out[k], _ = s.FEConfigValue(k)
		}
		adminJSON(w, out)
	})
	mux.HandleFunc("POST /config", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Key   string `json:"key"`
			Value int64  `json:"value"`
		}
		if !adminDecode(w, r, &req) {
			return
		}
		if err := s.SetFEConfig(req.Key, req.Value); err != nil {
			adminErr(w, http.StatusBadRequest, err)
			return
		}
		adminJSON(w, struct{}{})
	})
	mux.HandleFunc("POST /publish", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Hold bool `json:"hold"`
		}
		if !adminDecode(w, r, &req) {
			return
		}
		s.SetHoldPublish(req.Hold)
		adminJSON(w, struct{}{})
	})
	mux.HandleFunc("POST /databases/{db}", func(w http.ResponseWriter, r *http.Request) {
		if err := s.CreateDatabase(r.PathValue("db")); err != nil {
			adminErr(w, http.StatusConflict, err)
			return
		}
		adminJSON(w, struct{}{})
	})
	mux.HandleFunc("POST /databases/{db}/tables", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			DDL string `json:"ddl"`
		}
		if !adminDecode(w, r, &req) {
			return
		}
		if err := s.CreateTable(r.PathValue("db"), req.DDL); err != nil {
			adminErr(w, http.StatusBadRequest, err)
			return
		}
		adminJSON(w, struct{}{})
	})
	mux.HandleFunc("GET /tables/{db}/{table}/rows", func(w http.ResponseWriter, r *http.Request) {
		rows, err := s.Rows(r.PathValue("db"), r.PathValue("table"))
		if err != nil {
			adminErr(w, http.StatusNotFound, err)
			return
		}
		adminJSON(w, rows)
	})
	mux.HandleFunc("POST /tables/{db}/{table}/counting", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			On bool `json:"on"`
		}
		if !adminDecode(w, r, &req) {
			return
		}
		if err := s.SetCounting(r.PathValue("db"), r.PathValue("table"), req.On); err != nil {
			adminErr(w, http.StatusNotFound, err)
			return
		}
		adminJSON(w, struct{}{})
	})
	mux.HandleFunc("GET /tables/{db}/{table}/counts", func(w http.ResponseWriter, r *http.Request) {
		rows, bytes, err := s.Counts(r.PathValue("db"), r.PathValue("table"))
		if err != nil {
			adminErr(w, http.StatusNotFound, err)
			return
		}
		adminJSON(w, map[string]int64{"rows": rows, "bytes": bytes})
	})
	return mux
}

func (s *Server) adminAddFault(w http.ResponseWriter, r *http.Request) {
	var f Fault
	if !adminDecode(w, r, &f) {
		return
	}
	h, err := s.Fault(f)
	if err != nil {
		adminErr(w, http.StatusBadRequest, err)
		return
	}
	adminJSON(w, map[string]int64{"id": h.ID()})
}

// adminFault resolves the {id} path value to a fault handle for fn.
func (s *Server) adminFault(fn func(http.ResponseWriter, *http.Request, *FaultHandle)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			adminErr(w, http.StatusBadRequest, fmt.Errorf("fault id: %w", err))
			return
		}
		h, ok := s.FaultByID(id)
		if !ok {
			adminErr(w, http.StatusNotFound, fmt.Errorf("fault %d not found", id))
			return
		}
		fn(w, r, h)
	}
}

func (s *Server) adminFaultOp(fn func(*FaultHandle)) http.HandlerFunc {
	return s.adminFault(func(w http.ResponseWriter, _ *http.Request, h *FaultHandle) {
		fn(h)
		adminJSON(w, struct{}{})
	})
}

// adminWaitFault is FaultHandle.Wait for the request's lifetime; it gives
// up with 409 when the server closes, so Close never waits on it.
func (s *Server) adminWaitFault(w http.ResponseWriter, r *http.Request, h *FaultHandle) {
	var req struct {
		Hits int `json:"hits"`
	}
	if !adminDecode(w, r, &req) {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := h.Wait(ctx, req.Hits); err != nil {
		adminErr(w, http.StatusConflict, err)
		return
	}
	adminJSON(w, h.info())
}

func (s *Server) adminDo(fn func() error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(); err != nil {
			adminErr(w, http.StatusConflict, err)
			return
		}
		adminJSON(w, struct{}{})
	}
}

func (s *Server) adminAdvance(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Seconds float64 `json:"seconds"`
	}
	if !adminDecode(w, r, &req) {
		return
	}
	mc, ok := s.clock.(*ManualClock)
	if !ok {
		adminErr(w, http.StatusConflict, fmt.Errorf("clock/advance: the server does not use a ManualClock"))
		return
	}
	now := mc.Advance(time.Duration(req.Seconds * float64(time.Second)))
	s.RunCleaner()
	adminJSON(w, map[string]string{"now": now.Format(time.RFC3339Nano)})
}

func adminDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		adminErr(w, http.StatusBadRequest, fmt.Errorf("decode request: %w", err))
		return false
	}
	return true
}

func adminJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func adminErr(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
