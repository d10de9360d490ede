package doris

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MySQL transport states recorded by the client (MySQLPlaintext).
const (
	mysqlUnknown int32 = iota
	mysqlOverTLS
	mysqlOverPlaintext
)

// mysqlSecurity applies Config.MySQLTLS and Config.MySQLAllowInsecureAuth
// to the driver config: TLS, the plaintext fallback of "preferred", the
// cleartext plugin (allowed only where it cannot cross plaintext), and the
// authGuard that refuses password-revealing steps over plaintext.
func (c *Client) mysqlSecurity(mc *mysql.Config) error {
	mode := c.cfg.MySQLTLS
	if mode != MySQLTLSOff {
		t := c.cfg.TLS
		if t == nil {
			t = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		mc.TLS = t.Clone()
		if mc.TLS.ServerName == "" {
			if host, _, err := net.SplitHostPort(c.cfg.MySQL); err == nil {
				mc.TLS.ServerName = host
			}
		}
	}
	if mode == MySQLTLSPreferred {
		mc.AllowFallbackToPlaintext = true
		// The driver drops TLS from the config it connects with on a
		// fallback; without BeforeConnect that config is the connector's
		// own, shared by every connection (a data race, and later
		// connections would never try TLS again). BeforeConnect makes the
		// driver hand each connection a copy.
		if err := mc.Apply(mysql.BeforeConnect(func(context.Context, *mysql.Config) error { return nil })); err != nil {
			return fmt.Errorf("doris mysql %s: %w", c.cfg.MySQL, err)
		}
	}
	// mysql_clear_password (Doris LDAP accounts) sends the password as is:
	// only where TLS cannot be skipped, or when the operator allows it.
	mc.AllowCleartextPasswords = mode == MySQLTLSRequired || c.cfg.MySQLAllowInsecureAuth
	d := &net.Dialer{Timeout: c.cfg.RequestTimeout, KeepAlive: 30 * time.Second}
	mc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &authGuard{Conn: conn, addr: addr, allow: c.cfg.MySQLAllowInsecureAuth, report: c.mysqlReport}, nil
	}
	return nil
}

// mysqlReport records how a MySQL connection authenticated and warns
// (once) when credentials crossed plaintext.
func (c *Client) mysqlReport(overTLS, insecure bool, refused error) {
	switch {
	case refused != nil:
		c.mysqlRefused.Store(&refused)
	case overTLS:
		c.mysqlState.Store(mysqlOverTLS)
	default:
		c.mysqlState.Store(mysqlOverPlaintext)
		level := slog.LevelWarn
		if host, _, err := net.SplitHostPort(c.cfg.MySQL); err == nil && isLoopback(host) {
			level = slog.LevelDebug // loopback (dev, demo): nothing crosses the network
		}
		c.mysqlPlainOnce.Do(func() {
			c.log.Log(context.Background(), level, "doris: MySQL credentials crossed a plaintext connection to the FE: the login exchange "+
				"(mysql_native_password: a challenge a listener can brute-force offline) and every statement and "+
				"result are readable on the network; set doris.tls.ca_file and doris.mysql_tls: required",
				"mysql", c.cfg.MySQL, "mysql_tls", string(c.cfg.MySQLTLS))
		})
		if insecure {
			c.mysqlInsecureOnce.Do(func() {
				c.log.Warn("doris: the FE MySQL server was sent the password itself over plaintext (RSA with a key "+
					"the server sent, allowed by doris.mysql_allow_insecure_auth): anyone answering on its address "+
					"can read it", "mysql", c.cfg.MySQL)
			})
		}
	}
}

// MySQLPlaintext reports how the last MySQL connection to the FE
// authenticated: plaintext true when it was not TLS; known false before
// any connection finished its login.
func (c *Client) MySQLPlaintext() (plaintext, known bool) {
	switch c.mysqlState.Load() {
	case mysqlOverTLS:
		return false, true
	case mysqlOverPlaintext:
		return true, true
	}
	return false, false
}

// MySQLTLS returns the effective Config.MySQLTLS (after defaults).
func (c *Client) MySQLTLS() MySQLTLSMode { return c.cfg.MySQLTLS }
