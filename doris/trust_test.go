package doris

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostsFake is an FE at fe.example and one BE answering for every other
// host name (the transport dials by name), so a redirect can name hosts
// that are trusted or not without DNS. The FE redirects 2PC and Stream Load
// to http://<target>:<be port> with "root:wrong@" userinfo (released FEs
// embed credentials, docs/doris-facts.md §1.2) and lists be.internal in
// /api/backends (FE BackendsAction.java).
type hostsFake struct {
	target   string
	beHits   atomic.Int32
	listHits atomic.Int32
	mu       sync.Mutex
	beAuth   []string
	beURL    *url.URL
	rt       http.RoundTripper
}

func newHostsFake(t *testing.T, target string) *hostsFake {
	t.Helper()
	f := &hostsFake{target: target}
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.beHits.Add(1)
		f.mu.Lock()
		f.beAuth = append(f.beAuth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "_2pc") {
			io.WriteString(w, `{"status":"Success","msg":"transaction [7] commit successfully."}`)
			return
		}
		io.WriteString(w, `{"TxnId": 7, "Label": "l", "TwoPhaseCommit": "true", "Status": "Success", "Message": "OK", "NumberTotalRows": 1, "NumberLoadedRows": 1}`)
	}))
	t.Cleanup(be.Close)
	f.beURL, _ = url.Parse(be.URL)
	fe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/backends" {
			f.listHits.Add(1)
			io.WriteString(w, `{"msg":"success","code":0,"data":{"backends":[{"ip":"be.internal","http_port":8040,"is_alive":true}]},"count":0}`)
			return
		}
		loc := "http://root:wrong@" + f.target + ":" + f.beURL.Port() + r.URL.Path
		http.Redirect(w, r, loc, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(fe.Close)
	feAddr := strings.TrimPrefix(fe.URL, "http://")
	d := &net.Dialer{Timeout: 5 * time.Second}
	f.rt = &http.Transport{ExpectContinueTimeout: 5 * time.Second, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "fe.example:") {
			return d.DialContext(ctx, network, feAddr)
		}
		return d.DialContext(ctx, network, f.beURL.Host)
	}}
	return f
}

func (f *hostsFake) client(t *testing.T, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{FE: []string{"http://fe.example:8030"}, User: "root", Password: "right-pw", HTTPTransport: f.rt, MaxRetries: 1}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Credentials follow a redirect to a host the FE lists in /api/backends,
// and the BE gets the configured credentials, never the Location's
// userinfo.
func TestRedirectToListedBackendCarriesConfiguredCredentials(t *testing.T) {
	t.Parallel()
	f := newHostsFake(t, "be.internal")
	c := f.client(t, nil)
	if err := c.CommitTxn(context.Background(), "demo", 7); err != nil {
		t.Fatalf("commit via a listed BE: %v", err)
	}
	if _, err := c.StreamLoad(context.Background(), loadReq("l"), strings.NewReader("a\n")); err != nil {
		t.Fatalf("stream load via a listed BE: %v", err)
	}
	want := "Basic cm9vdDpyaWdodC1wdw==" // root:right-pw
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.beAuth) != 2 || f.beAuth[0] != want || f.beAuth[1] != want {
		t.Fatalf("BE Authorization %q, want the configured credentials twice", f.beAuth)
	}
	if n := f.listHits.Load(); n != 1 {
		t.Errorf("/api/backends fetched %d times, want 1 (cached)", n)
	}
}

// A redirect to a host that is neither configured, listed by the FE, nor
// the host the request went to is refused on every path before anything is
// sent there: a *RedirectError naming the host and the key, not ambiguous,
// not retried. RedirectAllowHosts lets it through.
func TestRedirectToUnknownHostRefused(t *testing.T) {
	t.Parallel()
	f := newHostsFake(t, "evil.example")
	c := f.client(t, nil)
	ctx := context.Background()
	_, lerr := c.StreamLoad(ctx, loadReq("l"), strings.NewReader("a\n"))
	cerr := c.CommitTxn(ctx, "demo", 7)
	_, serr := c.LoadState(ctx, "demo", "l")
	for op, err := range map[string]error{"stream load": lerr, "commit": cerr, "load state": serr} {
		var re *RedirectError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "evil.example") ||
			!strings.Contains(err.Error(), "doris.redirect_allow_hosts") || IsAmbiguous(err) {
			t.Errorf("%s: %v, want a non-ambiguous *RedirectError naming evil.example and doris.redirect_allow_hosts", op, err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("%s error quotes the Location's userinfo: %v", op, err)
		}
	}
	if n := f.beHits.Load(); n != 0 {
		t.Fatalf("the untrusted host got %d requests", n)
	}

	ok := f.client(t, func(cfg *Config) { cfg.RedirectAllowHosts = []string{"evil.example"} })
	if err := ok.CommitTxn(ctx, "demo", 7); err != nil {
		t.Fatalf("commit with RedirectAllowHosts: %v", err)
	}
}

// A configured BE host is trusted without asking the FE.
func TestRedirectToConfiguredBackend(t *testing.T) {
	t.Parallel()
	f := newHostsFake(t, "be.configured")
	c := f.client(t, func(cfg *Config) { cfg.BE = []string{"http://be.configured:8040"} })
	if err := c.CommitTxn(context.Background(), "demo", 7); err != nil {
		t.Fatalf("commit via a configured BE: %v", err)
	}
	if n := f.listHits.Load(); n != 0 {
		t.Errorf("/api/backends fetched %d times for a configured host", n)
	}
}

// Names cannot rewrite request paths: each segment is escaped ("." and
// ".." included), and Doris's name rules refuse them first.
func TestPathSegmentsEscaped(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("http://fe:8030")
	if got := apiURL(base, "api", "..", "a/b", "_stream_load").String(); got != "http://fe:8030/api/%2E%2E/a%2Fb/_stream_load" {
		t.Errorf("apiURL = %s", got)
	}
	c, err := NewClient(Config{FE: []string{"http://127.0.0.1:1"}, User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ne *NameError
	req := loadReq("l")
	req.DB = ".."
	if _, err := c.StreamLoad(context.Background(), req, strings.NewReader("")); !errors.As(err, &ne) {
		t.Errorf("StreamLoad into db ..: %v, want a *NameError", err)
	}
	if err := c.CommitTxn(context.Background(), "../x", 1); !errors.As(err, &ne) {
		t.Errorf("CommitTxn in db ../x: %v, want a *NameError", err)
	}
}

// Doris's rules (FeNameFormat.java): db ^[a-zA-Z][a-zA-Z0-9-_]{0,63}$,
// table ^[a-zA-Z][a-zA-Z0-9-_]*$ up to 64; unicode letters allowed
// (enable_unicode_name_support).
func TestDorisNameRules(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"demo", "a-b_c9", "订单", "A" + strings.Repeat("x", 63)} {
		if err := ValidateDatabaseName(ok); err != nil {
			t.Errorf("db %q: %v", ok, err)
		}
		if err := ValidateTableName(ok); err != nil {
			t.Errorf("table %q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "1abc", "_x", "a.b", "a/b", "..", "a b", "a`b", "A" + strings.Repeat("x", 64)} {
		if ValidateDatabaseName(bad) == nil {
			t.Errorf("db %q accepted", bad)
		}
		if ValidateTableName(bad) == nil {
			t.Errorf("table %q accepted", bad)
		}
	}
}
