package doristest

// Several BEs (backends.go): round-robin redirects as fe
// LoadAction.selectLocalRedirectBackend (BeSelectionPolicy round robin over
// load-available BEs), liveness through the FE heartbeat
// (heartbeat_interval_second, max_backend_heartbeat_failure_tolerance_count
// = 1, fe Config.java), txns on the FE shared by all BEs.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// redirectTarget asks the FE for a 307 and returns the Location's host:port.
func redirectTarget(t *testing.T, s *Server) string {
	t.Helper()
	resp, body := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load", hdr{"Expect": "100-continue"}, "")
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("FE answered %d %s, want 307", resp.StatusCode, body)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestBackends_RoundRobinRedirect(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(3))
	urls := s.BEURLs()
	wantEq(t, "BEs", len(urls), 3)
	wantEq(t, "BEURL is BE 0", s.BEURL(), urls[0])
	seen := map[string]bool{}
	for i := range 6 {
		got := redirectTarget(t, s)
		wantEq(t, "redirect "+itoa(int64(i)), got, hostOf(t, urls[i%3]))
		seen[got] = true
	}
	wantEq(t, "distinct BEs", len(seen), 3)
}

// A txn begun through one BE is committed through another: the txn lives
// on the FE (GlobalTransactionMgr), not on the BE that took the body.
func TestBackends_TxnSharedAcrossBEs(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(2))
	urls := s.BEURLs()
	_, raw := do(t, "PUT", urls[0]+"/api/demo/orders/_stream_load", hdr{"label": "shared", "two_phase_commit": "true"}, "1\ta\n")
	id := int64(0)
	if v, err := decode(t, raw)["TxnId"].(json.Number).Int64(); err == nil {
		id = v
	}
	_, raw = do(t, "PUT", urls[1]+"/api/demo/_stream_load_2pc", hdr{"txn_id": itoa(id), "txn_operation": "commit"}, "")
	wantEq(t, "commit on BE 1", decode(t, raw)["status"], any("Success"))
	rows, err := s.Rows(testDB, "orders")
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	// The same label through BE 1 is already used.
	_, raw = do(t, "PUT", urls[1]+"/api/demo/orders/_stream_load", hdr{"label": "shared"}, "2\tb\n")
	wantEq(t, "label reuse on BE 1", decode(t, raw)["Status"], any("Label Already Exists"))
}

// BEDownAt: the BE refuses at once; the FE notices after
// heartbeat_interval_second on the server clock and then skips it; with
// every BE noticed down it answers NO_BACKEND_LOAD_AVAILABLE_MSG.
func TestBackends_DownUpAndHeartbeat(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithBackends(3), WithClock(clk))
	urls := s.BEURLs()
	s.BEDownAt(1)
	if _, err := doErr("PUT", urls[1]+"/api/demo/orders/_stream_load", hdr{"label": "x"}, "1\ta\n"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("BE 1 down: err = %v, want connection refused", err)
	}
	_, raw := do(t, "PUT", urls[2]+"/api/demo/orders/_stream_load", hdr{"label": "on2"}, "1\ta\n")
	wantEq(t, "BE 2 still loads", decode(t, raw)["Status"], any("Success"))
	// Not noticed yet: still listed alive, still in the rotation.
	wantEq(t, "alive before heartbeat", s.Backends()[1].Alive, true)
	wantEq(t, "up", s.Backends()[1].Up, false)
	targets := map[string]bool{}
	for range 3 {
		targets[redirectTarget(t, s)] = true
	}
	wantEq(t, "rotation includes BE 1", targets[hostOf(t, urls[1])], true)

	clk.Advance(4 * time.Second)
	wantEq(t, "alive at 4s", s.Backends()[1].Alive, true)
	clk.Advance(time.Second)
	wantEq(t, "alive at 5s", s.Backends()[1].Alive, false)
	for range 4 {
		if got := redirectTarget(t, s); got == hostOf(t, urls[1]) {
			t.Fatal("redirected to BE 1 after the heartbeat saw it down")
		}
	}
	_, body := do(t, "GET", s.FEURL()+"/api/backends?is_alive=true", hdr{}, "")
	wantEq(t, "alive list", strings.Count(body, `"ip"`), 2)
	_, body = do(t, "GET", s.FEURL()+"/api/backends", hdr{}, "")
	wantEq(t, "full list", strings.Count(body, `"is_alive":false`), 1)
	_, body = do(t, "GET", s.FEURL()+"/api/health", hdr{}, "")
	wantEq(t, "health", body, `{"msg":"success","code":0,"data":{"total_backend_num":3,"online_backend_num":2},"count":0}`)

	if err := s.BEUpAt(1); err != nil {
		t.Fatal(err)
	}
	_, raw = do(t, "PUT", urls[1]+"/api/demo/orders/_stream_load", hdr{"label": "on1"}, "1\ta\n")
	wantEq(t, "BE 1 loads again", decode(t, raw)["Status"], any("Success"))
	wantEq(t, "not yet seen up", s.Backends()[1].Alive, false)
	clk.Advance(5 * time.Second)
	wantEq(t, "seen up", s.Backends()[1].Alive, true)

	s.BEDown()
	clk.Advance(5 * time.Second)
	resp, body := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load", hdr{"Expect": "100-continue"}, "")
	wantEq(t, "HTTP", resp.StatusCode, 200)
	wantEq(t, "no backend", body, `{"status":"FAILED","msg":"No backend available for load, please check the status of your backends."}`)
	if err := s.BEUp(); err != nil {
		t.Fatal(err)
	}
}

// heartbeat_interval_second is an FE config key like the others.
func TestBackends_HeartbeatIntervalConfig(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk), FEConfig(ConfHeartbeatInterval, 1))
	s.BEDownAt(0)
	clk.Advance(time.Second)
	wantEq(t, "noticed after 1s", s.Backends()[0].Alive, false)
	if err := s.SetFEConfig(ConfHeartbeatInterval, 0); err == nil {
		t.Fatal("heartbeat_interval_second 0 accepted")
	}
}

func TestBackends_Options(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, maxBackends + 1} {
		if _, err := NewServer(WithBackends(n)); err == nil {
			t.Errorf("WithBackends(%d) accepted", n)
		}
	}
	s := newServer(t, WithBackends(2), URLHost("127.0.0.1"))
	wantEq(t, "FE host", strings.Split(hostOf(t, s.FEURL()), ":")[0], "127.0.0.1")
	wantEq(t, "BE1 host", strings.Split(hostOf(t, s.BEURLs()[1]), ":")[0], "127.0.0.1")
}

// ListenBE with a fixed port: BE i listens on port+i.
func TestBackends_FixedPorts(t *testing.T) {
	t.Parallel()
	probe := newServer(t)
	port := probe.Backends()[0].HTTPPort
	probe.Close() // frees the port for the next server
	s, err := NewServer(ListenBE("127.0.0.1:"+itoa(int64(port))), WithBackends(2))
	if err != nil {
		t.Skipf("port %d taken meanwhile: %v", port, err)
	}
	defer s.Close()
	wantEq(t, "BE 0 port", s.Backends()[0].HTTPPort, port)
	wantEq(t, "BE 1 port", s.Backends()[1].HTTPPort, port+1)
}

func TestBackends_Admin(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(2))
	admin(t, s, "POST", "/be/1/down", "", 200)
	wantEq(t, "BE 1 up", s.Backends()[1].Up, false)
	wantEq(t, "BE 0 up", s.Backends()[0].Up, true)
	admin(t, s, "POST", "/be/7/down", "", 404)
	admin(t, s, "POST", "/be/x/down", "", 404)
	admin(t, s, "POST", "/be/1/up", "", 200)
	wantEq(t, "BE 1 back", s.Backends()[1].Up, true)
	admin(t, s, "POST", "/be/down", "", 200)
	wantEq(t, "all down", !s.Backends()[0].Up && !s.Backends()[1].Up, true)
	admin(t, s, "POST", "/be/up", "", 200)
	list, _ := admin(t, s, "GET", "/backends", "", 200)["list"].([]any)
	raw, _ := json.Marshal(list)
	var infos []BackendInfo
	if err := json.Unmarshal(raw, &infos); err != nil || len(infos) != 2 || !infos[1].Up || infos[1].URL != s.BEURLs()[1] {
		t.Fatalf("GET /backends: %s (%v)", raw, err)
	}
}

// Close while a load waits for a slot ends the wait.
func TestBackends_CloseReleasesWaiters(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBEConcurrentLoads(1))
	h, err := s.Fault(Fault{Op: FaultStream, Block: true})
	if err != nil {
		t.Fatal(err)
	}
	a := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "a"}, "1\ta\n")
	if err := h.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	b := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "b"}, "2\tb\n")
	if err := s.waitBackends(context.Background(), 0, func(r, w int) bool { return r == 1 && w == 1 }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	<-a
	<-b
	wantEq(t, "b never began", s.LabelState(testDB, "b"), doris.TxnUnknown)
}

// Each BE counts the Stream Loads it served and the body bytes it read
// (emulator introspection, no Doris counterpart): a test can tell which BE
// took a load.
func TestBackends_LoadsServedAndWireBytes(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithBackends(3))
	urls := s.BEURLs()
	body := "1\ta\n2\tb\n"
	for i, l := range []string{"served-a", "served-b"} {
		_, raw := do(t, "PUT", urls[i+1]+"/api/demo/orders/_stream_load", hdr{"label": l}, body)
		wantEq(t, "load "+l, decode(t, raw)["Status"], any("Success"))
	}
	_, raw := do(t, "PUT", urls[2]+"/api/demo/orders/_stream_load", hdr{"label": "served-c"}, body)
	wantEq(t, "load served-c", decode(t, raw)["Status"], any("Success"))
	bes := s.Backends()
	for i, want := range []int64{0, 1, 2} {
		wantEq(t, "BE "+itoa(int64(i))+" loads served", bes[i].LoadsServed, want)
		wantEq(t, "BE "+itoa(int64(i))+" wire bytes", bes[i].WireBytes, want*int64(len(body)))
	}
	wantEq(t, "server wire bytes", s.WireBytes(), 3*int64(len(body)))
	// A 2PC call is not a Stream Load.
	do(t, "PUT", urls[0]+"/api/demo/_stream_load_2pc", hdr{"txn_id": "1", "txn_operation": "abort"}, "")
	wantEq(t, "BE 0 after a 2PC call", s.Backends()[0].LoadsServed, int64(0))
}

// readFlag is a load body that records whether it was read.
type readFlag struct {
	r    io.Reader
	read atomic.Bool
}

func (f *readFlag) Read(p []byte) (int, error) {
	f.read.Store(true)
	return f.r.Read(p)
}

// A load refused before it begins (Label Already Exists) is answered
// without asking for the body: the client, which sent Expect:
// 100-continue, never sends a byte of it. The per-BE counters must not
// change that (net/http decides it on the request's original Body), with
// or without the ingest model's throttle.
func TestBackends_EarlyRefusalLeavesBodyUnread(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]Opt{nil, {WithLoadThroughput(1 << 20)}} {
		s := newServer(t, opts...)
		c, err := doris.NewClient(doris.Config{FE: []string{s.FEURL()}, User: "root", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		req := doris.LoadRequest{DB: testDB, Table: "orders", Label: "early"}
		if _, err := c.StreamLoad(context.Background(), req, strings.NewReader("1\ta\n")); err != nil {
			t.Fatal(err)
		}
		body := &readFlag{r: strings.NewReader("2\tb\n")}
		_, err = c.StreamLoad(context.Background(), req, body)
		if !errors.Is(err, doris.ErrLabelAlreadyExists) {
			t.Fatalf("second load: %v, want Label Already Exists", err)
		}
		if body.read.Load() {
			t.Fatal("the body of a load refused before it began was read (the server sent 100 Continue)")
		}
	}
}
