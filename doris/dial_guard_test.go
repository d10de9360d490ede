package doris

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris/httptrust"
)

// guardFake is an FE that lists backends (GET /api/backends) and
// redirects Stream Load and 2PC to redirectTo, and a BE counting what
// reaches it. The client uses its own transport (the dial guard is part of
// it); feOnLoopback is replaced, since tests only have loopback.
type guardFake struct {
	fe, be *httptest.Server
	beHits atomic.Int32
}

func newGuardFake(t *testing.T, listed []string, redirectTo func(bePort string) string) *guardFake {
	t.Helper()
	f := &guardFake{}
	f.be = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.beHits.Add(1)
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "_2pc") {
			io.WriteString(w, `{"status":"Success","msg":"transaction [7] commit successfully."}`)
			return
		}
		io.WriteString(w, `{"TxnId": 7, "Label": "l", "TwoPhaseCommit": "true", "Status": "Success", "Message": "OK", "NumberTotalRows": 1, "NumberLoadedRows": 1}`)
	}))
	t.Cleanup(f.be.Close)
	_, bePort, _ := net.SplitHostPort(f.be.Listener.Addr().String())
	f.fe = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/backends" {
			type row struct {
				IP       string `json:"ip"`
				HTTPPort int    `json:"http_port"`
				IsAlive  bool   `json:"is_alive"`
			}
			var rows []row
			for _, ip := range listed {
				var port int
				fmt.Sscan(bePort, &port)
				rows = append(rows, row{IP: ip, HTTPPort: port, IsAlive: true})
			}
			b, _ := json.Marshal(map[string]any{"code": 0, "msg": "success", "data": map[string]any{"backends": rows}})
			w.Write(b)
			return
		}
		http.Redirect(w, r, redirectTo(bePort)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(f.fe.Close)
	return f
}

func (f *guardFake) client(t *testing.T, feLoopback bool, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{FE: []string{f.fe.URL}, User: "root", Password: "pw", MaxRetries: 2}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.feOnLoopback = func(context.Context) bool { return feLoopback }
	t.Cleanup(func() { c.Close() })
	return c
}

// Issue 25: with doris.be_spread backends, a BE the FE lists at an
// unspecified, link-local or multicast IP, or at a loopback IP while the FE
// is not on loopback, gets nothing: the load fails at once with a
// *RedirectError naming the address and the way to trust it, instead of
// sending the credentials and rows there (on main it dialed each of them).
func TestBESpreadRefusesDangerousListedAddresses(t *testing.T) {
	t.Parallel()
	for _, ip := range []string{"169.254.169.254", "0.0.0.0", "224.0.0.1", "fe80::1", "127.0.0.2"} {
		f := newGuardFake(t, []string{ip}, func(p string) string { return "http://127.0.0.1:" + p })
		c := f.client(t, false, func(cfg *Config) { cfg.BESpread = BESpreadBackends })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req := loadReq("l")
		req.BESlot = 1
		_, err := c.StreamLoad(ctx, req, strings.NewReader("{}\n"))
		cancel()
		var re *RedirectError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), ip) || !strings.Contains(err.Error(), "doris.be") || IsAmbiguous(err) {
			t.Errorf("listed BE %s: %v, want a *RedirectError naming it and doris.be, not ambiguous", ip, err)
		}
		if n := f.beHits.Load(); n != 0 {
			t.Errorf("listed BE %s: the BE got %d requests", ip, n)
		}
	}
}

// Issue 25: a BE named by host is checked on the IP dialed. "localhost"
// resolves to a loopback IP: refused while the FE is not on loopback, on
// every path (be_spread backends, the FE's Stream Load 307, a 2PC 307),
// not retried and not sent; accepted when the FE is on loopback (tests, a
// single-machine cluster) and when the operator configured the host.
func TestBEHostCheckedOnTheDialedIP(t *testing.T) {
	t.Parallel()
	f := newGuardFake(t, []string{"localhost"}, func(p string) string { return "http://localhost:" + p })
	ctx := context.Background()
	spread := func(cfg *Config) { cfg.BESpread = BESpreadBackends }
	run := func(c *Client) (spreadErr, feErr, commitErr error) {
		req := loadReq("l")
		req.BESlot = 1
		_, spreadErr = c.StreamLoad(ctx, req, strings.NewReader("{}\n"))
		_, feErr = c.StreamLoad(ctx, loadReq("l2"), strings.NewReader("{}\n"))
		return spreadErr, feErr, c.CommitTxn(ctx, "demo", 7)
	}
	errs := [3]error{}
	errs[0], errs[1], errs[2] = run(f.client(t, false, spread))
	for i, err := range errs {
		var ae *httptrust.AddressError
		if !errors.As(err, &ae) || ae.IP != "127.0.0.1" && ae.IP != "::1" || IsAmbiguous(err) {
			t.Errorf("path %d, FE off loopback: %v, want an *httptrust.AddressError for localhost, not ambiguous", i, err)
		}
	}
	if n := f.beHits.Load(); n != 0 {
		t.Fatalf("the BE got %d requests while the FE is off loopback", n)
	}
	errs[0], errs[1], errs[2] = run(f.client(t, true, spread))
	for i, err := range errs {
		if err != nil {
			t.Errorf("path %d, FE on loopback: %v", i, err)
		}
	}
	allow := func(cfg *Config) { spread(cfg); cfg.RedirectAllowHosts = []string{"localhost"} }
	errs[0], errs[1], errs[2] = run(f.client(t, false, allow))
	for i, err := range errs {
		if err != nil {
			t.Errorf("path %d, localhost in RedirectAllowHosts: %v", i, err)
		}
	}
	if n := f.beHits.Load(); n != 6 {
		t.Fatalf("BE hits %d, want 6", n)
	}
}
