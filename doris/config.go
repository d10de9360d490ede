package doris

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by NewClient to zero Config fields.
const (
	DefaultRequestTimeout        = 30 * time.Second
	DefaultLoadTimeout           = time.Hour
	DefaultExpectContinueTimeout = 5 * time.Second
	DefaultMaxRetries            = 4
)

// Config configures a Client. The zero value of every field but FE and User
// is valid and means the documented default.
type Config struct {
	// FE lists frontend HTTP endpoints, "http(s)://host:port" (port 8030 by
	// default in Doris). Required. Stream Load, 2PC and get_load_state go to
	// the first FE that accepts a connection; a connection refused moves to
	// the next one.
	FE []string
	// BE optionally lists backend HTTP endpoints ("http://host:8040"). When
	// set, Stream Load goes straight to a BE (round robin) instead of asking
	// an FE for a redirect. 2PC and get_load_state still use FE.
	BE []string
	// BESpread is how Stream Loads without Config.BE choose their BE:
	// BESpreadFE (the default, also "") asks an FE for a 307, and the FE
	// picks among its load-available BEs round robin (fe
	// LoadAction.selectLocalRedirectBackend); BESpreadBackends sends a
	// load with LoadRequest.BESlot straight to one BE of the FE's GET
	// /api/backends list (be_spread.go). With Config.BE set, a load with
	// a BESlot goes to that slot of Config.BE whatever BESpread says.
	BESpread BESpread
	// MySQL is the FE MySQL protocol address "host:port" (9030 by default in
	// Doris). Required only by TransactionByLabel, TransactionByID,
	// ShowCreateTable and FrontendConfig.
	MySQL string
	// User and Password are the Doris credentials (HTTP Basic auth and MySQL).
	User, Password string
	// TLS configures the https FE and BE endpoints (its RootCAs is the
	// custom CA; nil means the system roots) and the MySQL connection (nil:
	// plain MySQL). The server name is taken from each URL's host.
	//
	// MySQL uses it as MySQLTLS says (default required: TLS verified with
	// this config, fe.conf enable_ssl). http:// endpoints stay plain
	// whatever TLS says. Note that a
	// Doris FE redirects Stream Load to "http://<be>" even when reached over
	// https (docs/doris-facts.md §1.2): for TLS all the way to the BE, list https
	// BEs in BE (or put a TLS proxy in front that rewrites the Location).
	TLS *tls.Config
	// RequestTimeout bounds every small call (2PC, get_load_state, MySQL
	// statements, the FE redirect step of Stream Load), retries included.
	// Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// LoadTimeout bounds a whole StreamLoad call, body streaming included.
	// Default DefaultLoadTimeout; negative means no bound beyond ctx.
	LoadTimeout time.Duration
	// ExpectContinueTimeout is how long a request with "Expect: 100-continue"
	// waits for the server before the body is sent anyway (only used when
	// HTTPTransport is nil). Default DefaultExpectContinueTimeout. The FE
	// redirect step never sends body bytes whatever this value.
	ExpectContinueTimeout time.Duration
	// MaxRetries bounds the retries of small idempotent calls (2PC,
	// get_load_state) on connection errors and 5xx. Default
	// DefaultMaxRetries; negative means no retry. Stream Load is never
	// retried.
	MaxRetries int
	// MySQLTLS is how the MySQL connection uses TLS: MySQLTLSRequired,
	// MySQLTLSPreferred or MySQLTLSOff. Default: required when TLS is set
	// (the operator configured TLS for Doris), off otherwise. Over a
	// plaintext connection the client refuses authentication methods that
	// reveal the password (see MySQLAllowInsecureAuth).
	MySQLTLS MySQLTLSMode
	// MySQLAllowInsecureAuth lets the password cross a plaintext MySQL
	// connection: cleartext (mysql_clear_password) or RSA-encrypted with a
	// key the server sends (caching_sha2_password full authentication,
	// sha256_password), both readable by whoever answers on the FE's
	// address. Default false: such a server is refused. Doris itself uses
	// mysql_native_password, which never sends the password.
	MySQLAllowInsecureAuth bool
	// RedirectAllowHosts lists extra host names a 307 may send the
	// credentials to, beyond the configured FE and BE hosts, the hosts the
	// FE lists in GET /api/backends and the host the request went to ("*":
	// any host). Default none.
	RedirectAllowHosts []string
	// RedirectAllowHTTP lets an https request follow a redirect to plain
	// http (credentials and body then travel unencrypted; a warning is
	// logged once). Default false: refused. Doris FEs always redirect to
	// http BEs (docs/doris-facts.md §1.2): with https FEs, list https BEs in BE or
	// set this.
	RedirectAllowHTTP bool
	// Logger receives the client's logs, every line redacted (Redact, and
	// the password itself). Default: discard.
	Logger *slog.Logger
	// HTTPTransport replaces the client's own transport (tests, proxies).
	// Its ExpectContinueTimeout should be non-zero.
	HTTPTransport http.RoundTripper
}

// endpoints is a validated, normalised list of base URLs.
type endpoints []*url.URL

func (c *Config) applyDefaults() {
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.LoadTimeout == 0 {
		c.LoadTimeout = DefaultLoadTimeout
	}
	if c.ExpectContinueTimeout == 0 {
		c.ExpectContinueTimeout = DefaultExpectContinueTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MySQLTLS == "" {
		c.MySQLTLS = MySQLTLSOff
		if c.TLS != nil {
			c.MySQLTLS = MySQLTLSRequired
		}
	}
}

// validate checks cfg and returns the parsed FE and BE endpoints.
func (c *Config) validate() (fe, be endpoints, err error) {
	if len(c.FE) == 0 {
		return nil, nil, errors.New("doris config: FE: at least one frontend URL is required")
	}
	if c.User == "" {
		return nil, nil, errors.New("doris config: User is required")
	}
	if c.RequestTimeout < 0 {
		return nil, nil, fmt.Errorf("doris config: RequestTimeout %v is negative", c.RequestTimeout)
	}
	if c.ExpectContinueTimeout < 0 {
		return nil, nil, fmt.Errorf("doris config: ExpectContinueTimeout %v is negative", c.ExpectContinueTimeout)
	}
	if fe, err = parseEndpoints("FE", c.FE); err != nil {
		return nil, nil, err
	}
	if be, err = parseEndpoints("BE", c.BE); err != nil {
		return nil, nil, err
	}
	switch c.MySQLTLS {
	case MySQLTLSRequired, MySQLTLSPreferred, MySQLTLSOff:
	default:
		return nil, nil, fmt.Errorf("doris config: MySQLTLS %q: want required, preferred or off", c.MySQLTLS)
	}
	if err := c.BESpread.validate(); err != nil {
		return nil, nil, err
	}
	if c.MySQL != "" && (strings.Contains(c.MySQL, "/") || !strings.Contains(c.MySQL, ":")) {
		return nil, nil, fmt.Errorf("doris config: MySQL %q: want host:port", c.MySQL)
	}
	return fe, be, nil
}

func parseEndpoints(field string, raw []string) (endpoints, error) {
	out := make(endpoints, 0, len(raw))
	for i, s := range raw {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("doris config: %s[%d]: %s", field, i, Redact(err.Error()))
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("doris config: %s[%d] %q: scheme must be http or https", field, i, u.Redacted())
		}
		if u.Host == "" {
			return nil, fmt.Errorf("doris config: %s[%d] %q: missing host:port", field, i, u.Redacted())
		}
		if u.User != nil {
			return nil, fmt.Errorf("doris config: %s[%d] %q: put credentials in User/Password, not the URL", field, i, u.Redacted())
		}
		if p := strings.TrimRight(u.Path, "/"); p != "" || u.RawQuery != "" {
			return nil, fmt.Errorf("doris config: %s[%d] %q: want scheme://host:port without path", field, i, u.Redacted())
		}
		out = append(out, &url.URL{Scheme: u.Scheme, Host: u.Host})
	}
	return out, nil
}
