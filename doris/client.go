package doris

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/doris-sink/doris-sink/doris/httptrust"
)

// Client talks to one Doris cluster. It is safe for concurrent use. Create
// it with NewClient and release it with Close. The zero value is not usable.
type Client struct {
	cfg    Config
	fe, be endpoints
	auth   string // "Basic ..." header value; never logged
	log    *slog.Logger

	// load sends Stream Load PUTs; redirects are handled by hand
	// (CheckRedirect returns ErrUseLastResponse).
	load *http.Client
	// small sends 2PC and get_load_state with bounded retries; it follows
	// 307s re-adding Authorization.
	small *retryablehttp.Client
	// ownTransport is closed by Close when the client built it.
	ownTransport *http.Transport

	// downgradeOnce warns once that an https FE redirected to an http BE.
	downgradeOnce sync.Once
	// red redacts errors and logs (Redact plus this client's password).
	red redactor
	// backends caches the FE's GET /api/backends hosts (allowRedirect).
	backends backendList
	// loadBEs caches the load targets of BESpreadBackends (be_spread.go).
	loadBEs loadBackends
	// feOnLoopback reports whether every configured FE is on loopback
	// (feOnLoopbackLookup; tests replace it), feLoop caches it, and proxies
	// holds the HTTP proxies' host:port (dial_guard.go).
	feOnLoopback func(context.Context) bool
	feLoop       feLoopback
	proxies      sync.Map

	// MySQL security state (mysql_security.go).
	mysqlState        atomic.Int32
	mysqlRefused      atomic.Pointer[error]
	mysqlPlainOnce    sync.Once
	mysqlInsecureOnce sync.Once

	nextFE atomic.Uint32 // round robin start for small calls
	nextBE atomic.Uint32 // round robin over Config.BE

	mu     sync.Mutex
	db     *sql.DB // lazily opened by mysqlDB
	closed bool
}

// NewClient validates cfg, applies the defaults documented on Config, and
// returns a Client. It does not connect.
func NewClient(cfg Config) (*Client, error) {
	cfg.applyDefaults()
	fe, be, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	red := newRedactor(cfg.User, cfg.Password)
	c := &Client{
		cfg:  cfg,
		fe:   fe,
		be:   be,
		auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.User+":"+cfg.Password)),
		log:  withSecrets(cfg.Logger, red),
		red:  red,
	}
	c.feOnLoopback = c.feOnLoopbackLookup
	rt := cfg.HTTPTransport
	if rt == nil {
		c.ownTransport = c.newTransport(&cfg)
		rt = c.ownTransport
	}
	rt = scrubLocation{rt: rt, red: red}
	c.load = &http.Client{
		Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	c.small = c.newSmallClient(rt)
	return c, nil
}

// newTransport is the client's own transport: its dials to hosts an FE
// named are checked on the IP dialed (dialPolicy).
func (c *Client) newTransport(cfg *Config) *http.Transport {
	t := BaseTransport()
	t.Proxy = c.proxyFunc
	t.DialContext = httptrust.GuardedDial(&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}, c.dialPolicy)
	t.TLSClientConfig = cfg.TLS
	t.ExpectContinueTimeout = cfg.ExpectContinueTimeout
	return t
}

// BaseTransport returns a transport with the connection settings of the
// client's own (HTTP/1.1, keep-alive, pool sizes, timeouts, write buffer)
// and a plain dialer, no proxy and no TLS config: the client adds its
// dial policy, proxy, TLS and 100-continue timeout; `doris-sink bench`'s
// limit line sends its bytes over the same kind of connection.
func BaseTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   false, // Doris speaks HTTP/1.1; 100-continue relies on it
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// A Stream Load body read in 32 KiB pieces (a caller's plain
		// io.Reader) is sent as 32 KiB chunks, each flushed: a buffer that
		// holds a whole chunk makes that one write syscall instead of three
		// (the default 4 KiB). Bodies with WriteTo (the loader's) send
		// larger chunks written straight through.
		WriteBufferSize: 64 << 10,
	}
}

// Close releases idle connections and the MySQL pool. In-flight calls are
// not interrupted (cancel their contexts). Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.ownTransport != nil {
		c.ownTransport.CloseIdleConnections()
	}
	if c.db != nil {
		if err := c.db.Close(); err != nil {
			return fmt.Errorf("close mysql pool: %w", err)
		}
	}
	return nil
}

var errClosed = errors.New("doris: client closed")

// withTimeout bounds ctx by d when d > 0.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}
