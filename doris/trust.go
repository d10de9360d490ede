package doris

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/doris/httptrust"
)

// RedirectError is a redirect the client refused to follow: sending the
// request (and the Doris credentials it carries) to To would give them to
// a host the operator did not trust, or would downgrade https to http. No
// request was sent to To. Key names the setting that allows it.
type RedirectError struct {
	Op       string // e.g. "stream load db.t label l" or "commit txn 7 in db d"
	From, To string // redacted URLs
	Reason   string
	Key      string // "Config.RedirectAllowHosts (doris.redirect_allow_hosts)" or the https→http one
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s: refused redirect from %s to %s: %s; set %s to allow it", e.Op, e.From, e.To, e.Reason, e.Key)
}

// Keys of the refusals, named in RedirectError.Key.
const (
	keyAllowHosts = "Config.RedirectAllowHosts (doris.redirect_allow_hosts)"
	keyAllowHTTP  = "Config.RedirectAllowHTTP (doris.redirect_allow_http)"
	// keyConfigureBE names the way to trust a BE address the FE names but
	// httptrust.RefusedIP refuses: configure it.
	keyConfigureBE = "Config.BE (doris.be) or Config.RedirectAllowHosts (doris.redirect_allow_hosts) naming that host"
)

// backendsTTL bounds how often the FE's BE list is fetched again when a
// redirect names a host missing from it.
const backendsTTL = 30 * time.Second

// backendList is the cache of the hosts GET /api/backends lists
// (docs/doris-facts.md "FE REST used by connectors"; FE BackendsAction.java).
type backendList struct {
	mu      sync.Mutex
	hosts   map[string]bool
	fetched time.Time
}

type noBackendsKey struct{}

// allowRedirect decides whether a request to from may be re-sent, with the
// client's credentials, to to (the rule of docs/operations.md "Security"):
//   - the scheme is the same or stronger (http→https); https→http only with
//     Config.RedirectAllowHTTP, and then with a warning (once);
//   - the host is the one the request was sent to (the same name, or both
//     loopback: the credentials never leave the machine), a configured FE or
//     BE, a host the FE lists in GET /api/backends (fetched lazily, cached),
//     or in Config.RedirectAllowHosts ("*": any).
//
// A refusal is a *RedirectError.
func (c *Client) allowRedirect(ctx context.Context, op string, from, to *url.URL) error {
	refuse := func(reason, key string) error {
		return &RedirectError{Op: op, From: RedactURL(from), To: RedactURL(to), Reason: reason, Key: key}
	}
	switch err := httptrust.RedirectScheme(from, to); {
	case errors.Is(err, httptrust.ErrScheme):
		return refuse(fmt.Sprintf("scheme %q is not http or https", to.Scheme), keyAllowHosts)
	case errors.Is(err, httptrust.ErrDowngrade):
		if !c.cfg.RedirectAllowHTTP {
			return refuse("https to plain http would send the Basic credentials (and a Stream Load's body) unencrypted "+
				"(Doris FEs redirect to http BEs, docs/doris-facts.md §1.2; https BE endpoints in Config.BE, doris.be, "+
				"spare Stream Load the redirect)", keyAllowHTTP)
		}
		c.downgradeOnce.Do(func() {
			c.log.Warn("an https FE redirected to a plain-http BE: the body and the Basic credentials cross the network "+
				"unencrypted (Doris FEs always redirect to http, docs/doris-facts.md §1.2); list https BE endpoints in doris.be "+
				"to load straight to them", "from", RedactURL(from), "to", RedactURL(to))
		})
	}
	if c.configuredHost(to.Hostname()) {
		return nil
	}
	if c.trustedHost(ctx, from, to) {
		// Trusted because a server named it: only as far as that server is
		// (httptrust.RefusedIP; a name is checked on the IP dialed,
		// dialPolicy).
		if ip := net.ParseIP(strings.Trim(to.Hostname(), "[]")); ip != nil {
			if r := httptrust.RefusedIP(ip, !ip.IsLoopback() || c.feOnLoopback(ctx)); r != "" {
				return refuse(fmt.Sprintf("%s is %s; an address the FE names is trusted only as far as the FE is", to.Hostname(), r), keyConfigureBE)
			}
		}
		return nil
	}
	return refuse(fmt.Sprintf("host %s is not a configured FE or BE, not listed by the FE's /api/backends, and not the host "+
		"the request was sent to", to.Hostname()), keyAllowHosts)
}

// configuredHost reports whether the operator named host: a configured FE
// or BE, or a host listed in Config.RedirectAllowHosts ("*" does not count:
// it trusts names, not where they lead).
func (c *Client) configuredHost(host string) bool {
	host = strings.Trim(host, "[]")
	for _, a := range c.cfg.RedirectAllowHosts {
		if a != "*" && strings.EqualFold(strings.Trim(a, "[]"), host) {
			return true
		}
	}
	for _, eps := range []endpoints{c.fe, c.be} {
		for _, e := range eps {
			if strings.EqualFold(e.Hostname(), host) {
				return true
			}
		}
	}
	return false
}

// trustedHost reports whether a host the operator did not name may get the
// credentials: the request's own host (or both loopback), any host with
// RedirectAllowHosts "*", or a BE the FE lists.
func (c *Client) trustedHost(ctx context.Context, from, to *url.URL) bool {
	h := strings.ToLower(to.Hostname())
	if httptrust.SameHost(h, from.Hostname()) || slices.Contains(c.cfg.RedirectAllowHosts, "*") {
		return true
	}
	if ctx.Value(noBackendsKey{}) != nil {
		return false // the /api/backends request itself was redirected
	}
	return c.listedBackend(ctx, h)
}

// listedBackend reports whether the FE's BE list names host, fetching the
// list when it was never fetched or is older than backendsTTL.
func (c *Client) listedBackend(ctx context.Context, host string) bool {
	b := &c.backends
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hosts[host] {
		return true
	}
	if !b.fetched.IsZero() && time.Since(b.fetched) < backendsTTL {
		return false
	}
	hosts, err := c.fetchBackends(ctx)
	b.fetched = time.Now()
	if err != nil {
		c.log.Warn("doris: cannot list the FE's backends to check a redirect target", "host", host, "err", err)
		return false
	}
	b.hosts = hosts
	return hosts[host]
}

// fetchBackends asks an FE for GET /api/backends and returns the hosts it
// lists (fetchBackendRows).
func (c *Client) fetchBackends(ctx context.Context) (map[string]bool, error) {
	rows, err := c.fetchBackendRows(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(rows))
	for _, be := range rows {
		out[strings.ToLower(strings.Trim(be.IP, "[]"))] = true
	}
	return out, nil
}

// backendRow is one BE of GET /api/backends.
type backendRow struct {
	IP       string `json:"ip"`
	HTTPPort int    `json:"http_port"`
	IsAlive  bool   `json:"is_alive"`
}

// fetchBackendRows asks an FE for GET /api/backends: {"code":0,"data":
// {"backends":[{"ip","http_port","is_alive"}]}} (FE BackendsAction.java).
func (c *Client) fetchBackendRows(ctx context.Context) ([]backendRow, error) {
	ctx = context.WithValue(ctx, noBackendsKey{}, true)
	ans, err := c.doSmall(ctx, "list backends", http.MethodGet, []string{"api", "backends"}, nil, nil, false)
	if err != nil {
		return nil, err
	}
	if ans.status != http.StatusOK {
		return nil, fmt.Errorf("list backends: HTTP %d: %s", ans.status, snippet(ans.body))
	}
	var a struct {
		Code int `json:"code"`
		Data struct {
			Backends []backendRow `json:"backends"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ans.body, &a); err != nil {
		return nil, fmt.Errorf("list backends: %w: %q", err, snippet(ans.body))
	}
	if a.Code != 0 {
		return nil, fmt.Errorf("list backends: code %d: %s", a.Code, snippet(ans.body))
	}
	return a.Data.Backends, nil
}

func isLoopback(host string) bool { return httptrust.IsLoopback(host) }

// isRedirectRefusal reports whether err holds a *RedirectError.
func isRedirectRefusal(err error) bool {
	var re *RedirectError
	return errors.As(err, &re)
}
