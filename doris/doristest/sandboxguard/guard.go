// Package sandboxguard refuses, in front of a sandbox's HTTP handler (the
// emulator's FE, BE and admin endpoints, the sandbox Schema Registry of
// `doris-sink dev`), what a web page or a stranger could send it, without
// refusing a real client:
//   - Host must be a loopback name or address ("localhost", 127.0.0.0/8,
//     ::1), one of Hosts (the listen host, the host the sandbox puts in its
//     URLs), or any IP literal when the listener binds every interface: a
//     DNS-rebound name (a page of evil.example resolving to 127.0.0.1) gets
//     403;
//   - a request with an Origin header whose host:port is not the request's
//     Host gets 403 (browsers send Origin on cross-site requests; curl, Go
//     clients, doris-streamloader and the Doris SDKs send none);
//   - a POST (and each method in BodyMethods) must carry one of BodyTypes as
//     its Content-Type (415 otherwise): a cross-site form or a CORS-simple
//     fetch can only send text/plain, form types or none, and anything else
//     needs a preflight the sandbox never answers. A cross-origin PUT, DELETE
//     or a PUT of any content (Stream Load) needs that preflight too, so
//     Stream Load PUTs are not restricted by type;
//   - a body longer than MaxBody (per request) gets 413 when announced by
//     Content-Length, and fails the handler's read otherwise
//     (http.MaxBytesReader).
package sandboxguard

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/doris-sink/doris-sink/doris/httptrust"
)

// Guard is an http.Handler that checks a request before Next sees it.
type Guard struct {
	// Hosts are host names or addresses accepted in Host besides loopback
	// ones (case-insensitive); "" entries are ignored.
	Hosts []string
	// AnyIP accepts any IP literal in Host (the listener binds 0.0.0.0 or
	// ::, so clients reach it by any of the machine's addresses).
	AnyIP bool
	// BodyTypes are the media types a POST, and a request of BodyMethods,
	// must have; nil checks none.
	BodyTypes []string
	// BodyMethods are methods besides POST whose Content-Type is checked.
	BodyMethods []string
	// MaxBody bounds the body of r (0 or negative: no bound); nil is none.
	MaxBody func(r *http.Request) int64
	// Deny writes a refusal (nil: http.Error).
	Deny func(w http.ResponseWriter, status int, msg string)
	// Next serves what passes.
	Next http.Handler
}

// ServeHTTP refuses or passes r.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if status, msg := g.Check(r); status != 0 {
		g.deny(w, status, msg)
		return
	}
	if g.MaxBody != nil {
		if max := g.MaxBody(r); max > 0 {
			if r.ContentLength > max {
				g.deny(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes is longer than the sandbox's bound of %d bytes", r.ContentLength, max))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
	}
	g.Next.ServeHTTP(w, r)
}

// Check returns the status and reason of a refusal of r, or 0.
func (g *Guard) Check(r *http.Request) (int, string) {
	if !g.HostAllowed(r.Host) {
		return http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name or this sandbox's host (DNS rebinding?)", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" && !SameOrigin(o, r.Host) {
		return http.StatusForbidden, fmt.Sprintf("cross-origin request from %q refused", o)
	}
	if g.BodyTypes != nil && (r.Method == http.MethodPost || slices.Contains(g.BodyMethods, r.Method)) {
		if !ContentTypeIs(r, g.BodyTypes...) {
			return http.StatusUnsupportedMediaType, fmt.Sprintf("%s needs Content-Type %s, got %q", r.Method, strings.Join(g.BodyTypes, " or "), r.Header.Get("Content-Type"))
		}
	}
	return 0, ""
}

// ContentTypeIs reports whether r's Content-Type is one of types
// (parameters such as charset ignored).
func ContentTypeIs(r *http.Request, types ...string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && slices.Contains(types, mt)
}

func (g *Guard) deny(w http.ResponseWriter, status int, msg string) {
	if g.Deny != nil {
		g.Deny(w, status, msg)
		return
	}
	http.Error(w, msg, status)
}

// HostAllowed reports whether a Host header names this sandbox without
// going through a DNS name an attacker could control.
func (g *Guard) HostAllowed(hostport string) bool {
	h := hostport
	if sh, _, err := net.SplitHostPort(hostport); err == nil {
		h = sh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if httptrust.IsLoopback(h) {
		return true
	}
	for _, a := range g.Hosts {
		if a != "" && strings.EqualFold(strings.Trim(a, "[]"), h) {
			return true
		}
	}
	return g.AnyIP && net.ParseIP(h) != nil
}

// SameOrigin reports whether origin (scheme://host[:port]) names host:port.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes "null"
	}
	return strings.EqualFold(u.Host, host)
}

// IsUnspecified reports whether a listen host binds every interface ("",
// 0.0.0.0, ::).
func IsUnspecified(h string) bool {
	if h == "" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsUnspecified()
}
