package doristest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"time"
)

// Opt configures a Server. Options are applied in order by NewServer.
type Opt interface{ apply(*cfg) }

type opt struct{ fn func(*cfg) }

func (o opt) apply(c *cfg) { o.fn(c) }

type cfg struct {
	feAddr, beAddr, mysqlAddr, adminAddr string
	users                                map[string]string
	clock                                Clock
	logger                               *slog.Logger
	feConfig                             map[string]int64
	databases                            []string
	firstTxnID                           int64
	holdPublish                          bool
	redirectUserInfo                     bool
	noMySQL                              bool
	noAdmin                              bool
	tls                                  *tls.Config
	backends                             int    // WithBackends
	feHost, beHost                       string // host names in URLs (URLHost)
	ingest                               ingestModel
	allowNonLoopback                     bool
	adminToken                           string
	queryTimeout                         time.Duration
}

func defaultCfg() cfg {
	return cfg{
		feAddr:     "127.0.0.1:0",
		beAddr:     "127.0.0.1:0",
		mysqlAddr:  "127.0.0.1:0",
		adminAddr:  "127.0.0.1:0",
		users:      map[string]string{"root": ""},
		clock:      realClock{},
		logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		feConfig:   map[string]int64{},
		firstTxnID: 1000,
		backends:   1,
		feHost:     feHost,
		beHost:     beHost,
		// Released FEs embed user:password@ (RestBaseController.getRedirectUrL).
		redirectUserInfo: true,
	}
}

func (c *cfg) validate() error {
	if len(c.users) == 0 {
		return errors.New("doristest: Users: at least one user is required")
	}
	if c.clock == nil {
		return errors.New("doristest: WithClock: clock is nil")
	}
	if c.tls != nil && len(c.tls.Certificates) == 0 && c.tls.GetCertificate == nil {
		return errors.New("doristest: WithTLS: the config has no certificate")
	}
	if c.firstTxnID < 1 {
		return fmt.Errorf("doristest: FirstTxnID: %d is not positive", c.firstTxnID)
	}
	if c.backends < 1 || c.backends > maxBackends {
		return fmt.Errorf("doristest: WithBackends: %d is not in [1, %d]", c.backends, maxBackends)
	}
	if c.ingest.bytesPerSec < 0 {
		return fmt.Errorf("doristest: WithLoadThroughput: %d bytes/s is negative", c.ingest.bytesPerSec)
	}
	if c.ingest.concurrentLoads < 0 {
		return fmt.Errorf("doristest: WithBEConcurrentLoads: %d is negative", c.ingest.concurrentLoads)
	}
	if !c.allowNonLoopback {
		for _, l := range []struct{ opt, addr string }{
			{"ListenFE", c.feAddr}, {"ListenBE", c.beAddr}, {"ListenMySQL", c.mysqlAddr}, {"ListenAdmin", c.adminAddr},
		} {
			if h := listenHost(l.addr); !isLoopbackHost(h) {
				return fmt.Errorf("doristest: %s(%q): %q is not a loopback address; the emulator has no real security, "+
					"so listening off loopback needs AllowNonLoopback()", l.opt, l.addr, h)
			}
		}
	}
	for k, v := range c.feConfig {
		if err := checkFEConfig(k, v); err != nil {
			return fmt.Errorf("doristest: FEConfig: %w", err)
		}
	}
	return nil
}

// ListenFE sets the FE HTTP listen address (Doris http_port, 8030 in
// production). Default "127.0.0.1:0" (an ephemeral port). FEURL always uses
// the host name "localhost" so that redirects to the BE cross hosts.
func ListenFE(addr string) Opt { return opt{func(c *cfg) { c.feAddr = addr }} }

// ListenBE sets the BE HTTP listen address (Doris webserver_port, 8040).
// Default "127.0.0.1:0". BEURL uses the host "127.0.0.1" (see URLHost).
// With WithBackends(n), BE i listens on port+i (all ephemeral when the port
// is 0).
func ListenBE(addr string) Opt { return opt{func(c *cfg) { c.beAddr = addr }} }

// ListenMySQL sets the FE MySQL protocol listen address (query_port, 9030).
// Default "127.0.0.1:0".
func ListenMySQL(addr string) Opt { return opt{func(c *cfg) { c.mysqlAddr = addr }} }

// ListenAdmin sets the admin HTTP listen address (emulator only, see
// docs/emulator.md). Default "127.0.0.1:0".
func ListenAdmin(addr string) Opt { return opt{func(c *cfg) { c.adminAddr = addr }} }

// Users replaces the user table (name → password). Default: user "root" with
// an empty password.
func Users(users map[string]string) Opt {
	return opt{func(c *cfg) { c.users = maps.Clone(users) }}
}

// User adds (or replaces) one user on top of the current user table.
func User(name, password string) Opt {
	return opt{func(c *cfg) { c.users[name] = password }}
}

// WithClock sets the clock every Doris timer runs on. Default: the wall clock.
// Use a *ManualClock in tests.
func WithClock(clk Clock) Opt { return opt{func(c *cfg) { c.clock = clk }} }

// WithLogger sets the logger. Default: discard.
func WithLogger(l *slog.Logger) Opt { return opt{func(c *cfg) { c.logger = l }} }

// FEConfig overrides one FE config value (see FEConfigKeys for the keys and
// their Doris defaults, docs/doris-facts.md §4–§5).
func FEConfig(key string, value int64) Opt {
	return opt{func(c *cfg) { c.feConfig[key] = value }}
}

// SeedDatabases creates empty databases at start. Default: none.
func SeedDatabases(names ...string) Opt {
	return opt{func(c *cfg) { c.databases = append(c.databases, names...) }}
}

// FirstTxnID sets the first transaction id the cluster hands out; ids then
// increase by one per begin (docs/doris-facts.md §11.2). Default 1000.
func FirstTxnID(id int64) Opt { return opt{func(c *cfg) { c.firstTxnID = id }} }

// HoldPublish starts the server with publishing held: committed transactions
// stay COMMITTED (a non-2PC load answers "Publish Timeout") until
// Server.SetHoldPublish(false). Default: publish immediately (docs/doris-facts.md §5).
func HoldPublish() Opt { return opt{func(c *cfg) { c.holdPublish = true }} }

// RedirectWithUserInfo makes the FE embed "user:password@" in the 307
// Location whenever the request carried Authorization, as released Doris FEs
// do (RestBaseController.getRedirectUrL; docs/doris-facts.md §12 "§1.2 Location
// userinfo"). This is the default; the option is kept for explicitness.
func RedirectWithUserInfo() Opt { return opt{func(c *cfg) { c.redirectUserInfo = true }} }

// RedirectWithoutUserInfo makes the FE's 307 Location carry no userinfo
// (the stricter, newer-master-like case): a client following the redirect
// across hosts must re-add Authorization itself. Default: with userinfo.
func RedirectWithoutUserInfo() Opt { return opt{func(c *cfg) { c.redirectUserInfo = false }} }

// URLHost makes FEURL, BEURL(s) and the FE's 307 Location all use host name
// h (e.g. "127.0.0.1"), as `doris-sink dev` does so that the FE URL it prints
// and the BE URLs it redirects to name the same host. Listen addresses are
// not changed. Default: FE "localhost", BE "127.0.0.1" (different hosts, so
// Go drops Authorization on the redirect as it does against a real cluster).
func URLHost(h string) Opt { return opt{func(c *cfg) { c.feHost, c.beHost = h, h }} }

// WithBackends runs n BEs (1 ≤ n ≤ 64), each with its own HTTP listener
// (see ListenBE for ports). The FE redirects loads across the live ones
// round robin, /api/backends lists them, and each can be taken down on its
// own (BEDownAt). Transactions live on the FE, so a txn begun through one
// BE can be committed or aborted through any. Default 1.
func WithBackends(n int) Opt { return opt{func(c *cfg) { c.backends = n }} }

// WithLoadThroughput caps each Stream Load's body ingestion at bytesPerSec,
// measured on the server's Clock (a ManualClock load waits for Advance).
// It models a real BE's per-load ceiling for benchmarks (on the order of
// 100 MB/s, doris-streamloader's documentation). 0 (the default) is
// unlimited.
func WithLoadThroughput(bytesPerSec int64) Opt {
	return opt{func(c *cfg) { c.ingest.bytesPerSec = bytesPerSec }}
}

// WithBEConcurrentLoads limits each BE to n Stream Loads at a time; a load
// over the limit waits (unanswered, body unread) until one finishes, as a
// real BE's saturated HTTP workers leave a connection waiting. 0 (the
// default) is unlimited.
func WithBEConcurrentLoads(n int) Opt {
	return opt{func(c *cfg) { c.ingest.concurrentLoads = n }}
}

// WithoutMySQL does not start the MySQL protocol front. Default: started.
func WithoutMySQL() Opt { return opt{func(c *cfg) { c.noMySQL = true }} }

// WithoutAdmin does not start the admin HTTP endpoint. Default: started.
func WithoutAdmin() Opt { return opt{func(c *cfg) { c.noAdmin = true }} }

// WithTLS serves the FE and BE HTTP ports over TLS with config c (which must
// hold a certificate valid for "localhost" and "127.0.0.1", the host names
// of FEURL and BEURL): FEURL and BEURL become https, and the FE's 307
// Location points at the https BE. That last part is not Doris: a real FE
// always redirects to "http://<be>" (docs/doris-facts.md §1.2), so https to the BE
// needs Config.BE or a TLS proxy; the emulator's https redirect lets tests
// cover both hops over TLS. The MySQL front and the admin endpoint stay
// plain. Default: plain HTTP.
func WithTLS(c *tls.Config) Opt {
	return opt{func(cf *cfg) {
		cf.tls = c.Clone()
		// HTTP/1.1 only: Doris speaks it and Expect: 100-continue relies on it.
		cf.tls.NextProtos = []string{"http/1.1"}
	}}
}

// AllowNonLoopback lets the Listen* options name addresses off loopback
// (e.g. "0.0.0.0:8030"). Default: NewServer refuses them. Anyone who can
// reach such a port can load, read and drop data, and the admin endpoint
// then requires a bearer token (AdminToken, generated when not given).
// NewServer logs a warning naming every exposed listener, and the URLs
// carry the real bind address instead of localhost.
func AllowNonLoopback() Opt { return opt{func(c *cfg) { c.allowNonLoopback = true }} }

// AdminToken makes the admin endpoint require "Authorization: Bearer
// <token>" on every request. Default: no token on loopback, a random one
// (see Server.AdminToken) when the endpoint listens off loopback.
func AdminToken(token string) Opt { return opt{func(c *cfg) { c.adminToken = token }} }

// QueryTimeout bounds each statement of the MySQL front; a longer one fails
// with Doris's query timeout error. Default 30 s (Doris's query_timeout is
// 900 s); d <= 0 keeps the default.
func QueryTimeout(d time.Duration) Opt { return opt{func(c *cfg) { c.queryTimeout = d }} }
