package doris

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/doris/httptrust"
)

// The FE's word is trusted only as far as the FE is (docs/operations.md
// "Security"): a BE the FE lists in /api/backends (Config.BESpread
// backends) or redirects to is a host doris-sink sends the credentials and
// the rows to, so its address is checked on the IP actually dialed
// (httptrust.GuardedDial): never unspecified, link-local (169.254.169.254),
// multicast or broadcast; loopback only when every configured FE is on
// loopback itself. Hosts the operator named (Config.FE, Config.BE, a
// Config.RedirectAllowHosts entry other than "*") and the HTTP proxy are
// dialed as they are. The client's own transport does this; with
// Config.HTTPTransport set (or through a proxy, which resolves the name
// itself) only a literal IP in the target is checked (allowRedirect).

// dialPolicy is the httptrust.DialPolicy of one dial of the client's own
// transport.
func (c *Client) dialPolicy(_ context.Context, addr string) httptrust.DialPolicy {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if c.configuredHost(host) {
		return httptrust.DialPolicy{}
	}
	if _, ok := c.proxies.Load(strings.ToLower(addr)); ok {
		return httptrust.DialPolicy{}
	}
	return httptrust.DialPolicy{Guard: true, LoopbackOK: func() bool { return c.feOnLoopback(context.Background()) }}
}

// proxyFunc is http.ProxyFromEnvironment recording each proxy's host:port,
// so that dialPolicy dials the proxy as configured.
func (c *Client) proxyFunc(req *http.Request) (*url.URL, error) {
	u, err := http.ProxyFromEnvironment(req)
	if u != nil {
		host := u.Host
		if u.Port() == "" {
			port := "80"
			if u.Scheme == "https" {
				port = "443"
			}
			host = net.JoinHostPort(u.Hostname(), port)
		}
		c.proxies.Store(strings.ToLower(host), true)
	}
	return u, err
}

// feLoopback caches whether every configured FE is on loopback: its host
// is "localhost" or a loopback IP, or its name resolves to loopback IPs
// only. A failed lookup is not cached (the answer is "no" until one
// succeeds).
type feLoopback struct {
	mu    sync.Mutex
	known bool
	yes   bool
}

func (c *Client) feOnLoopbackLookup(ctx context.Context) bool {
	f := &c.feLoop
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known {
		return f.yes
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, fe := range c.fe {
		h := fe.Hostname()
		if httptrust.IsLoopback(h) {
			continue
		}
		if net.ParseIP(h) != nil {
			f.known, f.yes = true, false
			return false
		}
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, h)
		if err != nil || len(ips) == 0 {
			c.log.Warn("doris: cannot resolve an FE to tell whether it is on loopback; a loopback BE it names is refused",
				"fe", RedactURL(fe), "err", err)
			return false
		}
		for _, ip := range ips {
			if !ip.IP.IsLoopback() {
				f.known, f.yes = true, false
				return false
			}
		}
	}
	f.known, f.yes = true, true
	return true
}

// isAddressRefusal reports whether err holds an *httptrust.AddressError: a
// dial the guard refused before connecting.
func isAddressRefusal(err error) bool {
	var ae *httptrust.AddressError
	return errors.As(err, &ae)
}

// addressRefusal wraps a refused dial of op with the way to trust the
// address.
func addressRefusal(op string, err error) error {
	return fmt.Errorf("%s: %w; an address the FE names is trusted only as far as the FE is (docs/operations.md \"Security\"): "+
		"set %s to trust it", op, err, keyConfigureBE)
}
