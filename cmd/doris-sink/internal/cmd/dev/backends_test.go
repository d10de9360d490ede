package dev

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
)

// runDev starts `dev` with args on ephemeral ports and returns its
// endpoints; the server stops at the end of the test.
func runDev(t *testing.T, args ...string) Endpoints {
	t.Helper()
	f, _, _ := cmdutil.NewTestFactory(false)
	return startDev(t, f, args...)
}

// startDev is runDev with the caller's factory (environment, captured
// streams). Later flags in args override the ephemeral-port defaults.
func startDev(t *testing.T, f *cmdutil.Factory, args ...string) Endpoints {
	t.Helper()
	ready := make(chan Endpoints, 1)
	cmd := NewCmdDev(f, func(ctx context.Context, o *Options) error {
		o.Ready = func(ep Endpoints) { ready <- ep }
		return Run(ctx, o)
	})
	cmd.SetArgs(append([]string{"--fe-http", "127.0.0.1:0", "--be-http", "127.0.0.1:0", "--mysql", "127.0.0.1:0",
		"--kafka", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--schema-registry", "127.0.0.1:0", "-o", "json"}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	select {
	case ep := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("dev returned %v after cancel", err)
			}
		})
		return ep
	case err := <-done:
		cancel()
		t.Fatalf("dev exited early: %v", err)
	}
	return Endpoints{}
}

// --backends 2: both BEs printed, on the FE's host name, and a plain Go
// client that follows the 307 itself (as the official Go SDK does) keeps
// its credentials: the printed FE URL and the Location name one host, and
// the Location carries user:password@ as released FEs do.
func TestDevBackendsOneHost(t *testing.T) {
	t.Parallel()
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ep := runDev(t, "--backends", "2", "--password-file", pwFile)
	if len(ep.BEs) != 2 || ep.BEs[0] != ep.BE {
		t.Fatalf("BEs %v, BE %s", ep.BEs, ep.BE)
	}
	fe, _ := url.Parse(ep.FE)
	for _, be := range ep.BEs {
		u, _ := url.Parse(be)
		if u.Hostname() != fe.Hostname() {
			t.Fatalf("BE %s and FE %s name different hosts", be, ep.FE)
		}
	}
	for i := range 2 {
		req, _ := http.NewRequest(http.MethodPut, ep.FE+"/api/demo/"+SampleTable+"/_stream_load",
			strings.NewReader(`{"order_id":1,"status":"new","amount":9.5}`))
		req.SetBasicAuth("root", "pw")
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("format", "json")
		req.Header.Set("label", "sdk-"+string(rune('a'+i)))
		c := &http.Client{Transport: &http.Transport{}}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"Status": "Success"`) {
			t.Fatalf("load %d through the FE: %s", i, b)
		}
	}
}

func TestDevBackendFlagErrors(t *testing.T) {
	t.Parallel()
	f, _, _ := cmdutil.NewTestFactory(false)
	for _, args := range [][]string{{"--backends", "0"}, {"--backends", "65"}, {"--be-load-mbps", "-1"},
		{"--be-load-mbps", "0.0000001"}, {"--be-concurrent-loads", "-1"}} {
		cmd := NewCmdDev(f, func(context.Context, *Options) error { return nil })
		cmd.SetArgs(args)
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	var got *Options
	cmd := NewCmdDev(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--backends", "3", "--be-load-mbps", "100", "--be-concurrent-loads", "4"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Backends != 3 || got.LoadMBps != 100 || got.BEConcurrentLoads != 4 {
		t.Errorf("parsed %+v", got)
	}
}

// The human output lists every BE when there are several.
func TestDevPrintsEveryBE(t *testing.T) {
	t.Parallel()
	f, out, _ := cmdutil.NewTestFactory(false)
	o := &Options{IO: f.IO}
	ep := Endpoints{FE: "http://127.0.0.1:8030", BE: "http://127.0.0.1:8040", MySQL: "127.0.0.1:9030",
		BEs: []string{"http://127.0.0.1:8040", "http://127.0.0.1:8041"}, User: "root", Database: "demo"}
	if err := printHuman(o, ep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "http://127.0.0.1:8040 http://127.0.0.1:8041") {
		t.Fatalf("output lacks the BEs:\n%s", out)
	}
}
