package doristest

// Behavior: the admin endpoint drops BEs, expires labels and reads rows, so
// it refuses what a web page or a stranger could send it (emulator only; Doris
// has no such endpoint):
//   - Host must be a loopback name or address ("localhost", 127.0.0.0/8,
//     ::1), the host of the admin listen address, or, when that address is
//     unspecified (0.0.0.0, ::), any IP literal: a DNS-rebound name (a page
//     of evil.example resolving to 127.0.0.1) is refused with 403;
//   - a request with an Origin header whose host:port is not the request's
//     Host is refused with 403 (browsers send Origin on cross-site
//     requests; curl and Go clients send none);
//   - a POST must have Content-Type application/json (415 otherwise), which
//     a cross-site form or a CORS-simple fetch (text/plain) cannot set
//     without a preflight the endpoint never answers;
//   - with a token (AdminToken, or generated at start when the endpoint
//     listens off loopback), every request needs Authorization: Bearer
//     <token> (401 otherwise).

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/doris-sink/doris-sink/doris/doristest/sandboxguard"
	"github.com/doris-sink/doris-sink/doris/httptrust"
)

// adminGuard checks a request before the admin mux sees it; the Host,
// Origin and Content-Type rules are sandboxguard's, shared with the FE, BE
// and sandbox Schema Registry.
type adminGuard struct {
	bindHost string // host of the admin listen address
	token    string // "" = no token required
	next     http.Handler
}

func (g adminGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sg := sandboxguard.Guard{Hosts: []string{g.bindHost}, AnyIP: isUnspecifiedHost(g.bindHost)}
	if !sg.HostAllowed(r.Host) {
		adminErr(w, http.StatusForbidden, fmt.Errorf("admin: Host %q is not a loopback name or the admin listen host (DNS rebinding?)", r.Host))
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !sandboxguard.SameOrigin(o, r.Host) {
		adminErr(w, http.StatusForbidden, fmt.Errorf("admin: cross-origin request from %q refused", o))
		return
	}
	if g.token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="doristest admin"`)
			adminErr(w, http.StatusUnauthorized, fmt.Errorf("admin: missing or wrong bearer token"))
			return
		}
	}
	if r.Method == http.MethodPost && !sandboxguard.ContentTypeIs(r, "application/json") {
		adminErr(w, http.StatusUnsupportedMediaType, fmt.Errorf("admin: POST needs Content-Type: application/json, got %q", r.Header.Get("Content-Type")))
		return
	}
	g.next.ServeHTTP(w, r)
}

// isLoopbackHost reports whether h is "localhost" or a loopback IP.
func isLoopbackHost(h string) bool { return httptrust.IsLoopback(h) }

// isUnspecifiedHost reports whether h binds every interface ("", 0.0.0.0, ::).
func isUnspecifiedHost(h string) bool { return sandboxguard.IsUnspecified(h) }

// listenHost is the host part of a listen address ("" when it has none).
func listenHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// newAdminToken is a random bearer token for an admin endpoint off loopback.
func newAdminToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("doristest: admin token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
