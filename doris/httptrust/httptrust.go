// Package httptrust holds the rules doris-sink's HTTP clients apply before
// they send credentials somewhere a server pointed them: the Doris client's
// 307s and FE-listed BEs, the Schema Registry client's redirects. One
// implementation, so the clients cannot drift apart.
//
// The rules (docs/operations.md "Security"):
//   - a redirect keeps the scheme or upgrades it: https → http is a
//     downgrade (RedirectScheme), and a scheme that is not http or https is
//     refused;
//   - a redirect stays on a host the operator configured, or on the host the
//     request went to (the same name, or both loopback: SameHost);
//   - an address a server named (a BE an FE lists or redirects to) is
//     trusted only as far as that server is: an unspecified, link-local,
//     multicast or broadcast IP never, a loopback IP only when the server
//     itself is on loopback (RefusedIP), checked on the IP actually dialed
//     (Dialer), since a host name can resolve to 169.254.169.254.
package httptrust

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
)

// Errors of RedirectScheme.
var (
	// ErrDowngrade is a redirect from https to plain http: the credentials
	// (and any body) would cross the network unencrypted.
	ErrDowngrade = errors.New("https to plain http would send the credentials unencrypted")
	// ErrScheme is a redirect to a scheme other than http or https.
	ErrScheme = errors.New("the scheme is not http or https")
)

// RedirectScheme checks the scheme of a redirect from → to: nil when to is
// http or https and not a downgrade, else an error matching ErrScheme or
// ErrDowngrade (errors.Is).
func RedirectScheme(from, to *url.URL) error {
	switch {
	case to.Scheme != "http" && to.Scheme != "https":
		return fmt.Errorf("%w (%q)", ErrScheme, to.Scheme)
	case from.Scheme == "https" && to.Scheme == "http":
		return ErrDowngrade
	}
	return nil
}

// IsLoopback reports whether host (a name or an IP, with or without
// brackets) is "localhost" or a loopback IP. It does not resolve names.
func IsLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SameHost reports whether host a and host b are the same name (case
// insensitively) or both loopback (the credentials never leave the
// machine).
func SameHost(a, b string) bool {
	a, b = strings.Trim(a, "[]"), strings.Trim(b, "[]")
	return strings.EqualFold(a, b) || (IsLoopback(a) && IsLoopback(b))
}

// RefusedIP returns why credentials must not be sent to ip when a server
// named it, or "" when they may: an unspecified (0.0.0.0/8, ::), link-local
// (169.254.0.0/16, fe80::/10: cloud metadata endpoints live there),
// multicast or broadcast address never; a loopback address only when
// loopbackOK (the naming server is itself on loopback: otherwise a loopback
// address reaches whatever listens on this machine, not the server's peer).
func RefusedIP(ip net.IP, loopbackOK bool) string {
	v4 := ip.To4()
	switch {
	case ip.IsUnspecified() || (v4 != nil && v4[0] == 0):
		return "an unspecified address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata endpoints such as 169.254.169.254 live there)"
	case ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	case v4 != nil && v4.Equal(net.IPv4bcast):
		return "the broadcast address"
	case ip.IsLoopback() && !loopbackOK:
		return "a loopback address while the server that named it is not on loopback (it would reach this machine, not a peer of that server)"
	}
	return ""
}

// AddressError is a connection refused by RefusedIP before it was made:
// nothing was sent to Host.
type AddressError struct {
	// Host is the host:port that was asked for; IP is the address it
	// resolved to.
	Host, IP string
	// Reason is RefusedIP's.
	Reason string
}

// Error names the host, the IP and why.
func (e *AddressError) Error() string {
	if h, _, err := net.SplitHostPort(e.Host); e.Host == "" || (err == nil && strings.Trim(h, "[]") == e.IP) {
		return fmt.Sprintf("refused to connect to %s: %s", e.IP, e.Reason)
	}
	return fmt.Sprintf("refused to connect to %s (resolved to %s): %s", e.Host, e.IP, e.Reason)
}

// DialPolicy says how one dial of GuardedDial is checked: Guard false
// dials as is (a host the operator configured); Guard true checks every IP
// the dial connects to with RefusedIP, calling LoopbackOK only for a
// loopback IP.
type DialPolicy struct {
	Guard      bool
	LoopbackOK func() bool
}

// GuardedDial returns a DialContext for an http.Transport: a dial to addr
// for which policy says Guard is made with a net.Dialer.Control that
// refuses, before the connection is made, an IP RefusedIP refuses (an
// *AddressError, wrapped in the dial's *net.OpError). It checks the IP
// actually dialed, after name resolution: a name that resolves to
// 169.254.169.254 is refused like the literal. d is copied, never changed.
func GuardedDial(d *net.Dialer, policy func(ctx context.Context, addr string) DialPolicy) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		p := policy(ctx, addr)
		if !p.Guard {
			return d.DialContext(ctx, network, addr)
		}
		gd := *d
		prev := d.Control
		gd.Control = func(network, address string, c syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				host = address
			}
			if ip := net.ParseIP(host); ip != nil {
				lok := ip.IsLoopback() && p.LoopbackOK != nil && p.LoopbackOK()
				if r := RefusedIP(ip, lok); r != "" {
					return &AddressError{Host: addr, IP: host, Reason: r}
				}
			}
			if prev != nil {
				return prev(network, address, c)
			}
			return nil
		}
		return gd.DialContext(ctx, network, addr)
	}
}
