package doris_test

// Config.BESpread and LoadRequest.BESlot (be_spread.go): with
// BESpreadBackends a load goes straight to BE (slot−1) mod n of the alive
// BEs GET /api/backends lists (fe httpv2/rest/BackendsAction.java), sorted
// by host:port; with BESpreadFE the FE's redirect picks (fe
// LoadAction.selectLocalRedirectBackend, round robin). The emulator's
// per-BE LoadsServed tells which BE took each load.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest"
)

// spreadClient is a client of s with the given spread (and Config.BE).
func spreadClient(t *testing.T, s *doristest.Server, spread doris.BESpread, be []string) *doris.Client {
	t.Helper()
	c, err := doris.NewClient(doris.Config{FE: []string{s.FEURL()}, BE: be, User: "loader", Password: "pw-emu",
		MaxRetries: 1, BESpread: spread})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// served returns each BE's LoadsServed.
func served(s *doristest.Server) []int64 {
	var out []int64
	for _, b := range s.Backends() {
		out = append(out, b.LoadsServed)
	}
	return out
}

// sortedBEs returns the BE indexes in host:port order (the order of the
// client's list).
func sortedBEs(t *testing.T, s *doristest.Server) []int {
	t.Helper()
	bes := s.Backends()
	idx := make([]int, len(bes))
	hosts := make([]string, len(bes))
	for i, b := range bes {
		u, err := url.Parse(b.URL)
		if err != nil {
			t.Fatal(err)
		}
		idx[i], hosts[i] = i, u.Host
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(hosts[a], hosts[b]) })
	return idx
}

func spreadLoad(t *testing.T, c *doris.Client, label string, slot int) {
	t.Helper()
	req := jsonLoad(label)
	req.BESlot = slot
	res, err := c.StreamLoad(context.Background(), req, strings.NewReader(`{"id":1,"v":"a"}`+"\n"))
	if err != nil {
		t.Fatalf("StreamLoad %s slot %d: %v", label, slot, err)
	}
	if err := c.AbortTxn(context.Background(), emuDB, res.TxnID); err != nil {
		t.Fatal(err)
	}
}

func TestBESpreadBackendsSlots(t *testing.T) {
	t.Parallel()
	s, _ := newEmulated(t, doristest.WithBackends(4))
	c := spreadClient(t, s, doris.BESpreadBackends, nil)
	order := sortedBEs(t, s)
	for slot := 1; slot <= 4; slot++ {
		spreadLoad(t, c, fmt.Sprintf("spread-%d", slot), slot)
		want := make([]int64, 4)
		for i := 0; i < slot; i++ {
			want[order[i]] = 1
		}
		if got := served(s); !slices.Equal(got, want) {
			t.Fatalf("after slot %d: loads served per BE %v, want %v", slot, got, want)
		}
	}
	// Slot 5 wraps to the first BE of the list.
	spreadLoad(t, c, "spread-5", 5)
	if got := s.Backends()[order[0]].LoadsServed; got != 2 {
		t.Fatalf("slot 5: BE %d served %d loads, want 2", order[0], got)
	}
}

// A BE that refuses connections is skipped for that load (the next of the
// list takes it), and the list is fetched again for the next load.
func TestBESpreadBackendsSkipsRefusingBE(t *testing.T) {
	t.Parallel()
	// A manual clock: the FE keeps listing the dead BE alive (no
	// heartbeat passes), so the client meets the refused connection.
	clock := doristest.NewManualClock(time.Unix(1e9, 0))
	s, _ := newEmulated(t, doristest.WithBackends(3), doristest.WithClock(clock))
	c := spreadClient(t, s, doris.BESpreadBackends, nil)
	order := sortedBEs(t, s)
	s.BEDownAt(order[1])
	spreadLoad(t, c, "skip-1", 2) // slot 2 is order[1]: refused, order[2] takes it
	want := make([]int64, 3)
	want[order[2]] = 1
	if got := served(s); !slices.Equal(got, want) {
		t.Fatalf("loads served per BE %v, want %v (BE %d down)", got, want, order[1])
	}
	// The refusal made the list stale: once the FE's heartbeat sees the BE
	// dead, the next load fetches the list again (two BEs, not three), so
	// slot 3 is order[0] (with the old list it would be order[2]).
	clock.Advance(5 * time.Second) // heartbeat_interval_second
	spreadLoad(t, c, "skip-2", 3)
	want[order[0]] = 1
	if got := served(s); !slices.Equal(got, want) {
		t.Fatalf("after the refresh: loads served per BE %v, want %v", got, want)
	}
}

// With BESpreadFE (the default) the slot is not used: the FE's round robin
// picks, so four loads of one slot in a row land on four BEs. The FE's
// index is shared by every request it redirects (the 2PC aborts between
// loads rotate it too), which is why the FE spread is not deterministic
// when other requests interleave.
func TestBESpreadFEIgnoresSlot(t *testing.T) {
	t.Parallel()
	s, _ := newEmulated(t, doristest.WithBackends(4))
	c := spreadClient(t, s, "", nil)
	var txns []int64
	for i := range 4 {
		req := jsonLoad(fmt.Sprintf("fe-%d", i))
		req.BESlot = 1
		res, err := c.StreamLoad(context.Background(), req, strings.NewReader(`{"id":1,"v":"a"}`+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		txns = append(txns, res.TxnID)
	}
	if got := served(s); !slices.Equal(got, []int64{1, 1, 1, 1}) {
		t.Fatalf("loads served per BE %v, want one each (FE round robin)", got)
	}
	for _, id := range txns {
		if err := c.AbortTxn(context.Background(), emuDB, id); err != nil {
			t.Fatal(err)
		}
	}
}

// With Config.BE the slot picks among the configured BEs, whatever the
// spread.
func TestBESpreadConfiguredBEs(t *testing.T) {
	t.Parallel()
	s, _ := newEmulated(t, doristest.WithBackends(3))
	urls := s.BEURLs()
	c := spreadClient(t, s, doris.BESpreadFE, []string{urls[2], urls[0], urls[1]})
	spreadLoad(t, c, "cfg-1", 1)
	spreadLoad(t, c, "cfg-2", 1)
	spreadLoad(t, c, "cfg-3", 3)
	if got := served(s); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("loads served per BE %v, want [0 1 2] (slot 1 → doris.be[0] = BE 2, slot 3 → BE 1)", got)
	}
}

func TestParseBESpread(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]doris.BESpread{"": doris.BESpreadFE, "FE": doris.BESpreadFE, "Backends": doris.BESpreadBackends} {
		if got, err := doris.ParseBESpread(in); err != nil || got != want {
			t.Errorf("ParseBESpread(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := doris.ParseBESpread("random"); err == nil || !strings.Contains(err.Error(), doris.BESpreadNames) {
		t.Errorf("ParseBESpread(random): %v, want an error naming %s", err, doris.BESpreadNames)
	}
	if _, err := doris.NewClient(doris.Config{FE: []string{"http://fe:8030"}, User: "u", BESpread: "rr"}); err == nil {
		t.Error("NewClient accepted BESpread rr")
	}
	_, err := doris.NewClient(doris.Config{FE: []string{"http://fe:8030"}, User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := doris.NewClient(doris.Config{FE: []string{"http://fe:8030"}, User: "u"})
	_, err = c.StreamLoad(context.Background(), doris.LoadRequest{DB: "d", Table: "t", BESlot: -1}, nil)
	if err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("BESlot -1: %v, want a validation error", err)
	}
}

// The redirect trust rules hold for BEs taken from /api/backends: an https
// FE's http BEs get the credentials only with RedirectAllowHTTP (a
// *RedirectError naming doris.redirect_allow_http otherwise, the BE never
// contacted), and a load sent straight to a listed BE never asks the FE
// for a redirect.
func TestBESpreadBackendsKeepsTrustRules(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		var beHits, feLoads atomic.Int32
		be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			beHits.Add(1)
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, `{"TxnId": 7, "Label": "l", "TwoPhaseCommit": "true", "Status": "Success", "Message": "OK", "NumberTotalRows": 1, "NumberLoadedRows": 1, "LoadBytes": 2}`)
		}))
		t.Cleanup(be.Close)
		u, _ := url.Parse(be.URL)
		host, port, _ := net.SplitHostPort(u.Host)
		fe := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/backends" {
				fmt.Fprintf(w, `{"msg":"success","code":0,"data":{"backends":[{"ip":%q,"http_port":%s,"is_alive":true}]},"count":0}`, host, port)
				return
			}
			feLoads.Add(1)
			http.Error(w, "not expected", http.StatusInternalServerError)
		}))
		t.Cleanup(fe.Close)
		tc := fe.Client().Transport.(*http.Transport).TLSClientConfig
		c, err := doris.NewClient(doris.Config{FE: []string{fe.URL}, User: "root", TLS: tc, RedirectAllowHTTP: allow,
			BESpread: doris.BESpreadBackends, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		req := doris.LoadRequest{DB: "db", Table: "t", Label: "l", Format: "json", TwoPhaseCommit: true, BESlot: 1}
		_, err = c.StreamLoad(context.Background(), req, strings.NewReader("{}"))
		if !allow {
			var re *doris.RedirectError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "doris.redirect_allow_http") || doris.IsAmbiguous(err) {
				t.Fatalf("without RedirectAllowHTTP: %v, want a *RedirectError naming doris.redirect_allow_http", err)
			}
			if n := beHits.Load(); n != 0 {
				t.Fatalf("the http BE got %d requests after the refusal", n)
			}
			continue
		}
		if err != nil {
			t.Fatalf("with RedirectAllowHTTP: %v", err)
		}
		if beHits.Load() != 1 || feLoads.Load() != 0 {
			t.Fatalf("BE requests %d, FE load requests %d; want 1 and 0 (straight to the listed BE)", beHits.Load(), feLoads.Load())
		}
	}
}
