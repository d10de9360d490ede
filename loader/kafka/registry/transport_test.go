package registry_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/kafka/registry"
)

// Issue 25: an https registry that redirects to plain http on the same
// host does not get the Basic credentials sent there (on main net/http
// kept Authorization and the http server received it): the fetch fails
// with ErrRedirectRefused, at once, not retried.
func TestRegistryRedirectHTTPSToHTTPRefused(t *testing.T) {
	t.Parallel()
	var plainHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		t.Errorf("the plain-http server got %s %s with Authorization %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(tlsSrv.Close)
	sl := &sleeps{}
	c := newClient(t, tlsSrv.URL, sl, func(cfg *registry.Config) {
		cfg.Username, cfg.Password = "u", "s3cret"
		cfg.TLS = tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig
	})
	_, err := c.Decoder(context.Background(), 1)
	var fe *registry.FetchError
	if !errors.As(err, &fe) || !errors.Is(err, registry.ErrRedirectRefused) || fe.Attempts != 1 {
		t.Fatalf("fetch through an https → http redirect: %v, want a *FetchError with ErrRedirectRefused after 1 attempt", err)
	}
	if plainHits.Load() != 0 || len(sl.waits) != 0 {
		t.Fatalf("plain server hits %d, waits %v", plainHits.Load(), sl.waits)
	}
}

// Issue 25: a redirect off the configured registry host is refused, also
// with a caller's HTTPClient; one to the same host is followed.
func TestRegistryRedirectToOtherHostRefused(t *testing.T) {
	t.Parallel()
	var evilHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.Host, "evil.example"):
			evilHits.Add(1)
			w.WriteHeader(http.StatusNotFound)
		case r.URL.Path == "/schemas/ids/1":
			http.Redirect(w, r, "http://evil.example:"+strings.Split(r.Host, ":")[1]+r.URL.Path, http.StatusTemporaryRedirect)
		case r.URL.Path == "/subjects":
			http.Redirect(w, r, "/moved/subjects", http.StatusTemporaryRedirect)
		case r.URL.Path == "/moved/subjects":
			io.WriteString(w, `["a"]`)
		}
	}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	d := &net.Dialer{Timeout: 5 * time.Second}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr) // every name reaches the test server
	}}}
	c := newClient(t, "http://sr.example:"+port, &sleeps{}, func(cfg *registry.Config) {
		cfg.Username, cfg.Password = "u", "s3cret"
		cfg.HTTPClient = hc
	})
	if s, err := c.Subjects(context.Background()); err != nil || len(s) != 1 {
		t.Fatalf("subjects through a same-host redirect: %v %v", s, err)
	}
	_, err := c.Decoder(context.Background(), 1)
	if !errors.Is(err, registry.ErrRedirectRefused) || !strings.Contains(err.Error(), "evil.example") {
		t.Fatalf("fetch redirected to another host: %v, want ErrRedirectRefused naming evil.example", err)
	}
	if evilHits.Load() != 0 {
		t.Fatalf("the other host got %d requests", evilHits.Load())
	}
	if hc.CheckRedirect != nil {
		t.Fatal("the caller's HTTPClient was changed")
	}
}

// Issue 25: a registry answer over MaxResponseBytes is a
// *ResponseTooLargeError naming the bound and the path, whether announced
// by Content-Length or streamed (chunked), not a truncated body that then
// fails to parse; an answer within the bound is read whole.
func TestRegistryAnswerOverCapRefused(t *testing.T) {
	t.Parallel()
	const max = 64 << 10
	big := `{"schema":"` + strings.Repeat("x", 2*max) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		switch r.URL.Path {
		case "/schemas/ids/1": // Content-Length set
			io.WriteString(w, big)
		case "/schemas/ids/2": // chunked
			for i := 0; i < 4; i++ {
				io.WriteString(w, big[i*len(big)/4:(i+1)*len(big)/4])
				w.(http.Flusher).Flush()
			}
		case "/schemas/ids/3":
			io.WriteString(w, `{"schema":`+strconv.Quote(userV1)+`}`)
		}
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, &sleeps{}, func(cfg *registry.Config) { cfg.MaxResponseBytes = max })
	for _, id := range []int{1, 2} {
		_, err := c.Decoder(context.Background(), id)
		var tl *registry.ResponseTooLargeError
		if !errors.As(err, &tl) || tl.Max != max || !strings.Contains(err.Error(), "/schemas/ids/") ||
			!strings.Contains(err.Error(), "records.schema_registry.max_response_bytes") {
			t.Fatalf("id %d: %v, want a *ResponseTooLargeError naming the path and the key", id, err)
		}
	}
	if _, err := c.Decoder(context.Background(), 3); err != nil {
		t.Fatalf("small answer: %v", err)
	}
}

// Issue 25: a registry's error message enters the *FetchError text with
// its control characters escaped.
func TestRegistryErrorTextIsEscaped(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"error_code":40301,"message":"\u001b[2Jdenied\nforged: yes"}`)
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL, &sleeps{}, nil).Decoder(context.Background(), 1)
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\n") || !strings.Contains(err.Error(), `\x1b[2Jdenied\nforged`) {
		t.Fatalf("error %q, want the registry's message with control characters escaped", err)
	}
}
