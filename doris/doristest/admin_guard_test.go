package doristest

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// adminReq sends one admin request to base+path with the given headers
// ("Host" sets the Host header) and returns the status code.
func adminReq(t *testing.T, base, method, path string, h hdr, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

const jsonCT = "application/json"

// A page on another site can POST text/plain (a CORS-simple request, no
// preflight) to the admin endpoint: refused by Origin and by content type,
// and the BE stays up.
func TestAdminGuard_CrossSiteSimplePOST(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.AdminURL()
	for name, h := range map[string]hdr{
		"text/plain from evil":      {"Content-Type": "text/plain", "Origin": "http://evil.example"},
		"json from evil":            {"Content-Type": jsonCT, "Origin": "http://evil.example"},
		"opaque origin":             {"Content-Type": jsonCT, "Origin": "null"},
		"other port, same hostname": {"Content-Type": jsonCT, "Origin": "http://127.0.0.1:1"},
	} {
		if got := adminReq(t, a, "POST", "/be/down", h, ""); got != http.StatusForbidden {
			t.Errorf("%s: HTTP %d, want 403", name, got)
		}
	}
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		if got := adminReq(t, a, "POST", "/be/down", hdr{"Content-Type": ct}, ""); got != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Type %q: HTTP %d, want 415", ct, got)
		}
	}
	res, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "still-up"})
	wantEq(t, "load after refused POSTs", res["Status"], any("Success"))

	// The same origin, and JSON, pass.
	u, _ := url.Parse(a)
	if got := adminReq(t, a, "GET", "/faults", hdr{"Origin": "http://" + u.Host}, ""); got != http.StatusOK {
		t.Errorf("same-origin GET: HTTP %d", got)
	}
	if got := adminReq(t, a, "POST", "/cleaner/run", hdr{"Content-Type": "application/json; charset=utf-8"}, ""); got != http.StatusOK {
		t.Errorf("JSON POST: HTTP %d", got)
	}
}

// DNS rebinding: evil.example resolves to 127.0.0.1, so the browser sends
// Host: evil.example:<port> to the admin port. Refused; loopback names pass.
func TestAdminGuard_DNSRebindingHost(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.AdminURL()
	u, _ := url.Parse(a)
	_, port, _ := net.SplitHostPort(u.Host)
	for _, host := range []string{"evil.example:" + port, "localhost.evil.example:" + port, "127.0.0.1.nip.io:" + port, "192.0.2.7:" + port} {
		if got := adminReq(t, a, "GET", "/tables/demo/orders/rows", hdr{"Host": host}, ""); got != http.StatusForbidden {
			t.Errorf("Host %s: HTTP %d, want 403", host, got)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "LocalHost"} {
		if got := adminReq(t, a, "GET", "/tables/demo/orders/rows", hdr{"Host": host}, ""); got != http.StatusOK {
			t.Errorf("Host %s: HTTP %d, want 200", host, got)
		}
	}
}

func TestAdminGuard_Token(t *testing.T) {
	t.Parallel()
	s := newServer(t, AdminToken("t0ken"))
	wantEq(t, "AdminToken", s.AdminToken(), "t0ken")
	a := s.AdminURL()
	for name, h := range map[string]hdr{
		"none":  {},
		"wrong": {"Authorization": "Bearer nope"},
		"basic": {"Authorization": "Basic dDBrZW46"},
	} {
		if got := adminReq(t, a, "GET", "/faults", h, ""); got != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, got)
		}
	}
	if got := adminReq(t, a, "GET", "/faults", hdr{"Authorization": "Bearer t0ken"}, ""); got != http.StatusOK {
		t.Errorf("right token: HTTP %d", got)
	}
	if newServer(t).AdminToken() != "" {
		t.Error("a loopback admin endpoint got a token without AdminToken")
	}
}

// Listeners stay on loopback unless AllowNonLoopback; with it, the admin
// endpoint gets a generated token, the URLs carry the bind address and a
// warning names every exposed listener.
func TestNonLoopbackListeners(t *testing.T) {
	t.Parallel()
	for _, o := range []Opt{ListenFE("0.0.0.0:0"), ListenBE(":0"), ListenMySQL("[::]:0"), ListenAdmin("192.0.2.1:0")} {
		s, err := NewServer(o)
		if err == nil {
			s.Close()
			t.Errorf("%+v: off-loopback address accepted without AllowNonLoopback", o)
		} else if !strings.Contains(err.Error(), "AllowNonLoopback()") {
			t.Errorf("error %q does not name AllowNonLoopback()", err)
		}
	}

	var logs syncBuf
	s := newServer(t, AllowNonLoopback(), ListenFE("0.0.0.0:0"), ListenAdmin("0.0.0.0:0"),
		ListenMySQL("0.0.0.0:0"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if !strings.HasPrefix(s.FEURL(), "http://0.0.0.0:") || !strings.HasPrefix(s.AdminURL(), "http://0.0.0.0:") {
		t.Errorf("FEURL %s, AdminURL %s: want the bind address", s.FEURL(), s.AdminURL())
	}
	if !strings.HasPrefix(s.MySQLAddr(), "0.0.0.0:") {
		t.Errorf("MySQLAddr %s: want the bind address", s.MySQLAddr())
	}
	if !strings.HasPrefix(s.BEURL(), "http://127.0.0.1:") {
		t.Errorf("BEURL %s: the BE stayed on loopback", s.BEURL())
	}
	log := logs.String()
	if !strings.Contains(log, "LISTENING OFF LOOPBACK") || !strings.Contains(log, "fe=0.0.0.0:") || !strings.Contains(log, "admin=0.0.0.0:") || !strings.Contains(log, "mysql=0.0.0.0:") || strings.Contains(log, "be=") {
		t.Errorf("warning %q does not name exactly fe, admin and mysql", log)
	}
	tok := s.AdminToken()
	if len(tok) != 48 {
		t.Fatalf("generated token %q", tok)
	}
	if strings.Contains(log, tok) {
		t.Error("the token is in the log")
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.AdminURL(), "http://"))
	a := "http://127.0.0.1:" + port
	if got := adminReq(t, a, "GET", "/faults", hdr{}, ""); got != http.StatusUnauthorized {
		t.Errorf("no token off loopback: HTTP %d, want 401", got)
	}
	auth := "Bearer " + tok
	for host, want := range map[string]int{"192.0.2.9:" + port: 200, "evil.example:" + port: 403} {
		if got := adminReq(t, a, "GET", "/faults", hdr{"Authorization": auth, "Host": host}, ""); got != want {
			t.Errorf("bound to 0.0.0.0, Host %s: HTTP %d, want %d", host, got, want)
		}
	}
}

// syncBuf is a strings.Builder safe for a logger and a reader.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
