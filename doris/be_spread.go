package doris

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BESpread is how Stream Loads choose their BE when Config.BE is empty
// (Config.BESpread, doris.be_spread).
type BESpread string

// The BE spreads.
const (
	// BESpreadFE asks an FE for the 307 (§1.2): the FE picks among its
	// load-available BEs round robin with one index shared by every load
	// of the cluster (fe LoadAction.selectLocalRedirectBackend:
	// BeSelectionPolicy setEnableRoundRobin(true).needLoadAvailable(), the
	// user's resource tags applied). Concurrent sub-loads usually land on
	// different BEs, but other loads of the cluster interleave with them.
	BESpreadFE BESpread = "fe"
	// BESpreadBackends sends a load with a LoadRequest.BESlot straight to
	// BE (slot−1) mod n of the BEs GET /api/backends lists alive (fe
	// httpv2/rest/BackendsAction.java: ip, http_port, is_alive), sorted by
	// host:port: the K sub-loads of a table land on K different BEs
	// whatever else the cluster loads, and the FE round trip is saved. The
	// list does not say which BEs are load-available (decommissioned, or
	// outside the user's resource tags): the FE's choice does.
	BESpreadBackends BESpread = "backends"
)

// BESpreadNames lists the values ParseBESpread accepts.
const BESpreadNames = "fe or backends"

// ParseBESpread parses a BESpread ("" is BESpreadFE), case-insensitively.
func ParseBESpread(s string) (BESpread, error) {
	switch v := BESpread(strings.ToLower(s)); v {
	case "", BESpreadFE:
		return BESpreadFE, nil
	case BESpreadBackends:
		return v, nil
	}
	return "", fmt.Errorf("BE spread %q: want %s", s, BESpreadNames)
}

func (b BESpread) validate() error {
	switch b {
	case "", BESpreadFE, BESpreadBackends:
		return nil
	}
	return fmt.Errorf("doris config: BESpread %q: want %s", string(b), BESpreadNames)
}

// loadBackends caches the BE endpoints of BESpreadBackends: the alive BEs
// of GET /api/backends, sorted. The list is fetched again when older than
// backendsTTL or after a load to one of them failed in transport.
type loadBackends struct {
	mu      sync.Mutex
	list    endpoints
	fetched time.Time
	stale   bool
}

// invalidate makes the next load fetch the list again.
func (b *loadBackends) invalidate() {
	b.mu.Lock()
	b.stale = true
	b.mu.Unlock()
}

// spreadTargets returns the BE endpoints a load with BESlot slot tries, in
// order: the slot's BE first, then the others. It is nil when the load is
// to be redirected by an FE (no slot, BESpreadFE, or an empty list).
func (c *Client) spreadTargets(ctx context.Context, req *LoadRequest) (endpoints, error) {
	if req.BESlot == 0 {
		return nil, nil
	}
	list := c.be
	if len(list) == 0 {
		if c.cfg.BESpread != BESpreadBackends {
			return nil, nil
		}
		var err error
		if list, err = c.aliveBackends(ctx); err != nil {
			return nil, fmt.Errorf("stream load %s.%s label %s: %w", req.DB, req.Table, req.Label, err)
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	start := (req.BESlot - 1) % len(list)
	out := make(endpoints, 0, len(list))
	for i := range list {
		out = append(out, list[(start+i)%len(list)])
	}
	return out, nil
}

// aliveBackends returns the cached alive BEs of GET /api/backends,
// fetching them when needed. A failed fetch is an error (the load is not
// sent): an FE that cannot list its BEs cannot be trusted to take the
// load either.
func (c *Client) aliveBackends(ctx context.Context) (endpoints, error) {
	b := &c.loadBEs
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stale && !b.fetched.IsZero() && time.Since(b.fetched) < backendsTTL {
		return b.list, nil
	}
	rows, err := c.fetchBackendRows(ctx)
	if err != nil {
		return nil, fmt.Errorf("doris.be_spread backends: %w", err)
	}
	var list endpoints
	for _, r := range rows {
		if r.IsAlive && r.HTTPPort > 0 && r.IP != "" {
			host := net.JoinHostPort(strings.Trim(r.IP, "[]"), strconv.Itoa(r.HTTPPort))
			list = append(list, &url.URL{Scheme: "http", Host: host}) // BEs serve http (§1.2)
		}
	}
	slices.SortFunc(list, func(x, y *url.URL) int { return strings.Compare(x.Host, y.Host) })
	b.list, b.fetched, b.stale = list, time.Now(), false
	c.log.Debug("stream load: BE list fetched for doris.be_spread backends", "alive", len(list), "listed", len(rows))
	return list, nil
}

// spreadLoad sends the load to targets in order (spreadTargets); a BE that
// refuses the connection before any body byte was read is skipped. The
// trust rules of a redirect apply to each BE taken from the FE's list
// (allowRedirect: the https → http rule; its host is listed). A transport
// failure marks the list stale. When every BE refused, the load falls back
// to the FE's redirect (nothing was sent).
func (c *Client) spreadLoad(ctx context.Context, req *LoadRequest, hdr http.Header, path []string, targets endpoints,
	hasBody bool, lb *loadBody) (*LoadResult, error) {
	listed := len(c.be) == 0 // taken from /api/backends, not configured
	for _, be := range targets {
		target := apiURL(be, path...)
		if listed {
			op := fmt.Sprintf("stream load %s.%s label %s (doris.be_spread backends)", req.DB, req.Table, req.Label)
			if err := c.allowRedirect(ctx, op, c.fe[0], target); err != nil {
				return nil, err
			}
		}
		res, err := c.putToBE(ctx, req, hdr, target, hasBody, lb)
		if isAddressRefusal(err) {
			return nil, err // the FE listed a BE whose address is refused: say so, do not try around it
		}
		var ns *notSentError
		if errors.As(err, &ns) && lb.n.Load() == 0 {
			c.log.Debug("stream load: BE refused connection, trying next", "be", RedactURL(be), "label", req.Label, "err", ns.err)
			if listed {
				c.loadBEs.invalidate()
			}
			if !listed && be == targets[len(targets)-1] {
				return nil, err
			}
			continue
		}
		if listed && IsAmbiguous(err) {
			c.loadBEs.invalidate() // the BE may have died: look again next time
		}
		return res, err
	}
	c.log.Warn("stream load: every BE of the FE's list refused the connection; asking an FE for a redirect",
		"label", req.Label, "tried", len(targets))
	target, err := c.redirect(ctx, req, hdr, path)
	if err != nil {
		return nil, err
	}
	return c.putToBE(ctx, req, hdr, target, hasBody, lb)
}
