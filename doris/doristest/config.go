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
// Default "127.0.0.1:0". BEURL always uses the host "127.0.0.1".
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
// their Doris defaults, doris-api.md §4–§5).
func FEConfig(key string, value int64) Opt {
	return opt{func(c *cfg) { c.feConfig[key] = value }}
}

// SeedDatabases creates empty databases at start. Default: none.
func SeedDatabases(names ...string) Opt {
	return opt{func(c *cfg) { c.databases = append(c.databases, names...) }}
}

// FirstTxnID sets the first transaction id the cluster hands out; ids then
// increase by one per begin (doris-api.md §11.2). Default 1000.
func FirstTxnID(id int64) Opt { return opt{func(c *cfg) { c.firstTxnID = id }} }

// HoldPublish starts the server with publishing held: committed transactions
// stay COMMITTED (a non-2PC load answers "Publish Timeout") until
// Server.SetHoldPublish(false). Default: publish immediately (doris-api.md §5).
func HoldPublish() Opt { return opt{func(c *cfg) { c.holdPublish = true }} }

// RedirectWithUserInfo makes the FE embed "user:password@" in the 307
// Location, as Doris 2.x FEs do (doris-api.md §1.2). Default: no userinfo, so
// clients must re-add Authorization themselves (the stricter behaviour).
func RedirectWithUserInfo() Opt { return opt{func(c *cfg) { c.redirectUserInfo = true }} }

// WithoutMySQL does not start the MySQL protocol front. Default: started.
func WithoutMySQL() Opt { return opt{func(c *cfg) { c.noMySQL = true }} }

// WithoutAdmin does not start the admin HTTP endpoint. Default: started.
func WithoutAdmin() Opt { return opt{func(c *cfg) { c.noAdmin = true }} }

// WithTLS serves the FE and BE HTTP ports over TLS with config c (which must
// hold a certificate valid for "localhost" and "127.0.0.1", the host names
// of FEURL and BEURL): FEURL and BEURL become https, and the FE's 307
// Location points at the https BE. That last part is not Doris: a real FE
// always redirects to "http://<be>" (doris-api.md §1.2), so https to the BE
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
