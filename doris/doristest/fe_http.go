package doristest

// Behavior: the FE HTTP front door (docs/doris-facts.md §1.2, §3.1, FE-LA / FE-RBC /
// FE-HTTP). Every answer is HTTP 200 with JSON except the 307.
//   - Auth first: no or bad Basic credentials →
//     {"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}
//     (a wrong password: "Access denied for user 'root@<ip>' (using password:
//     YES)" in data, AuthenticationException.formatErrMsg via BaseController).
//   - PUT /api/{db}/{table}/_stream_load: Expect header must be present (any
//     value) else {"status":"FAILED","msg":"There is no 100-continue header"};
//     then 307 to a BE (round robin over the live ones, backends.go), same
//     path + "?" + raw query (a trailing "?" when empty), Content-Type
//     text/html;charset=utf-8. The body is never read. Location carries
//     "user:password@" (percent-encoded like java.net.URI) whenever the
//     request had Authorization, as released FEs do
//     (RestBaseController.getRedirectUrL: userInfo = user + ":" + password,
//     cluster prefix stripped); RedirectWithoutUserInfo drops it (Go then
//     drops Authorization across hosts, so clients must re-add it). The FE
//     does not check that db or table exist; the BE does.
//   - REST endpoints the connectors call: fe_rest_*.go.
//   - PUT /api/{db}/_stream_load_2pc and /api/{db}/{table}/_stream_load_2pc:
//     no Expect check; txn_id or label header required ("No transaction id or
//     label selected."), txn_operation required ("No transaction
//     operation('commit' or 'abort') selected."); then 307.
//   - GET /api/{db}/get_load_state: see load_state.go.

import (
	"net/http"
	"net/url"
)

func (s *Server) feMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /api/{db}/{table}/_stream_load", s.feStreamLoad)
	mux.HandleFunc("PUT /api/{db}/_stream_load_2pc", s.feStreamLoad2PC)
	mux.HandleFunc("PUT /api/{db}/{table}/_stream_load_2pc", s.feStreamLoad2PC)
	mux.HandleFunc("GET /api/{db}/get_load_state", s.feGetLoadState)
	s.feRESTRoutes(mux)
	return mux
}

func (s *Server) beMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /api/{db}/{table}/_stream_load", s.beStreamLoad)
	mux.HandleFunc("PUT /api/{db}/_stream_load_2pc", s.beStreamLoad2PC)
	mux.HandleFunc("PUT /api/{db}/{table}/_stream_load_2pc", s.beStreamLoad2PC)
	mux.HandleFunc("GET /api/_load_error_log", s.beErrorLog)
	return mux
}

// feAuth checks Basic auth like BaseController; on failure it answers and
// returns false.
func (s *Server) feAuth(w http.ResponseWriter, r *http.Request) (user, password string, ok bool) {
	user, password, ok = basicAuth(r)
	if !ok {
		writeFEResponseBody(w, "Unauthorized", 401, "Need auth information.")
		return "", "", false
	}
	s.mu.Lock()
	denied := s.accessDeniedLocked(user, password, clientIP(r))
	s.mu.Unlock()
	if denied != "" {
		writeFEResponseBody(w, "Unauthorized", 401, denied)
		return "", "", false
	}
	return user, password, true
}

func (s *Server) feStreamLoad(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	user, password, ok := s.feAuth(w, r)
	if !ok {
		return
	}
	if r.Header.Get("Expect") == "" {
		writeFEFailed(w, "There is no 100-continue header")
		return
	}
	s.redirectToBE(w, r, user, password)
}

func (s *Server) feStreamLoad2PC(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	user, password, ok := s.feAuth(w, r)
	if !ok {
		return
	}
	if r.Header.Get("txn_id") == "" && r.Header.Get("label") == "" {
		writeFEFailed(w, "No transaction id or label selected.")
		return
	}
	if r.Header.Get("txn_operation") == "" {
		writeFEFailed(w, "No transaction operation('commit' or 'abort') selected.")
		return
	}
	s.redirectToBE(w, r, user, password)
}

// redirectToBE is RestBaseController.redirectTo: 307, same path, raw query,
// to the BE LoadAction.selectRedirectBackend picks (backends.go).
func (s *Server) redirectToBE(w http.ResponseWriter, r *http.Request, user, password string) {
	b := s.pickBackend()
	if b == nil {
		writeFEFailed(w, noBackendMsg)
		return
	}
	be, _ := url.Parse(b.ep.url())
	if s.cfg.redirectUserInfo && r.Header.Get("Authorization") != "" {
		be.User = url.UserPassword(user, password)
	}
	loc := be.String() + r.URL.EscapedPath() + "?" + r.URL.RawQuery
	w.Header().Set("Location", loc)
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	w.WriteHeader(http.StatusTemporaryRedirect)
}
