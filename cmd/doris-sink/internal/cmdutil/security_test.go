package cmdutil

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/doris"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Issue 10 finding 3: the https→http warning went to a logger the CLI
// never set. Through the Factory, the client logs to the CLI's logger
// (DorisWithLogger, as run does; Doris: stderr): the refusal by default,
// and with doris.redirect_allow_http the once-only downgrade warning.
func TestDorisClientLogsReachCLILogger(t *testing.T) {
	t.Parallel()
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"status":"Success","msg":"transaction [7] commit successfully."}`)
	}))
	t.Cleanup(be.Close)
	fe := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, be.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(fe.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: fe.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, allow := range []bool{false, true} {
		cfg := &config.Config{Doris: config.Doris{FE: []string{fe.URL}, MySQL: "127.0.0.1:1", User: "root",
			TLS: config.DorisTLS{CAFile: ca}, RedirectAllowHTTP: allow}}
		logs := &lockedBuf{}
		errOut := &lockedBuf{}
		f := &Factory{IO: &IOStreams{ErrOut: errOut}}
		var c *doris.Client
		var err error
		if allow {
			c, err = f.DorisWithLogger(cfg, slog.New(slog.NewTextHandler(logs, nil)))
		} else {
			c, err = f.Doris(cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		cerr := c.CommitTxn(context.Background(), "demo", 7)
		c.Close()
		var re *doris.RedirectError
		if !allow {
			if !errors.As(cerr, &re) {
				t.Fatalf("commit via https FE → http BE: %v, want a *RedirectError", cerr)
			}
			continue
		}
		if cerr != nil {
			t.Fatalf("commit with doris.redirect_allow_http: %v", cerr)
		}
		if !strings.Contains(logs.String(), "plain-http BE") {
			t.Errorf("downgrade warning not in the CLI's log: %q", logs.String())
		}
	}
}

// SecurityWarnings names plaintext MySQL and http endpoints off loopback,
// and the keys that let credentials through; loopback (dev, demo) is
// quiet.
func TestSecurityWarnings(t *testing.T) {
	t.Parallel()
	warn := func(d config.Doris) string {
		cfg := &config.Config{Doris: d}
		c, err := NewDorisClient(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return strings.Join(SecurityWarnings(cfg, c), "\n")
	}
	if w := warn(config.Doris{FE: []string{"http://127.0.0.1:8030"}, MySQL: "127.0.0.1:9030", User: "root"}); w != "" {
		t.Errorf("loopback warned: %s", w)
	}
	w := warn(config.Doris{FE: []string{"http://fe.lan:8030"}, MySQL: "fe.lan:9030", User: "root",
		RedirectAllowHTTP: true, MySQLAllowInsecureAuth: true, RedirectAllowHosts: []string{"*"}})
	for _, want := range []string{"doris.mysql fe.lan:9030 is plaintext", "http://fe.lan:8030: plain http",
		"doris.redirect_allow_http=true", "doris.mysql_allow_insecure_auth=true", "redirect_allow_hosts contains *"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
}

// A registry with credentials over plain http off loopback is warned
// about; https, loopback and no credentials are not.
func TestRegistrySecurityWarnings(t *testing.T) {
	t.Parallel()
	cfg := func(url, user string) *config.Config {
		return &config.Config{Records: config.Records{Format: config.RecordsAvro,
			SchemaRegistry: config.SchemaRegistry{URLs: []string{url}, Username: user}}}
	}
	if w := registryWarnings(cfg("http://sr.lan:8081", "u")); len(w) != 1 || !strings.Contains(w[0], "http://sr.lan:8081: plain http") {
		t.Errorf("plain http with credentials: %q", w)
	}
	for _, c := range []*config.Config{cfg("https://sr.lan:8081", "u"), cfg("http://127.0.0.1:8081", "u"), cfg("http://sr.lan:8081", "")} {
		if w := registryWarnings(c); len(w) != 0 {
			t.Errorf("%+v: %q, want none", c.Records.SchemaRegistry, w)
		}
	}
}

// Server text cannot drive the terminal: escapes are written out, in
// TerminalSafe and in table cells.
func TestTerminalSafe(t *testing.T) {
	t.Parallel()
	in := "Fail\x1b[2J\x1b]0;owned\x07 \u202eevil\r\nnext"
	got := TerminalSafe(in)
	if strings.ContainsAny(got, "\x1b\x07\r\u202e") || !strings.Contains(got, `\x1b[2J`) || !strings.Contains(got, "\nnext") {
		t.Fatalf("TerminalSafe(%q) = %q", in, got)
	}
	var out bytes.Buffer
	tab := NewTable(&IOStreams{Out: &out}, "status", "message")
	tab.AddRow("Fail", "[DATA_QUALITY_ERROR]\x1b[31mred\x1b[0m")
	if err := tab.Render(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Fatalf("table printed a raw ESC: %q", out.String())
	}
}
