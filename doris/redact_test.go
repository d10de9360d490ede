package doris

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"http://root:pw@h:1/x", "http://xxxxx@h:1/x"},
		// A Doris 307 Location (docs/doris-facts.md §1.2) with a password that
		// holds a space and an '@'.
		{`Location: http://root@default_cluster:p w@x@127.0.0.1:8040/api/db/t/_stream_load`,
			`Location: http://xxxxx@127.0.0.1:8040/api/db/t/_stream_load`},
		{`"Location: https://u:s3cret@be:8040\x01"`, `"Location: https://xxxxx@be:8040\x01"`},
		{"Authorization: Basic cm9vdDpwdw==\r\nHost: x", "Authorization: xxxxx\r\nHost: x"},
		{"map[Authorization:[Basic cm9vdDpwdw==] Expect:[100-continue]]", "map[Authorization:[xxxxx] Expect:[100-continue]]"},
		{"token Bearer abcdefghijkl end", "token Bearer xxxxx end"},
		{"GET /x?user=a&password=s3cret&y=1", "GET /x?user=a&password=xxxxx&y=1"},
		{"no secret at http://h:1/a@b", "no secret at http://h:1/a@b"},
		// Issue 25: user:pass@host without a scheme (a Kafka broker, a
		// registry URL without http://), alone, quoted, in a Go list.
		{`kafka.brokers: "u:KPWLEAK@127.0.0.1:1" is invalid`, `kafka.brokers: "xxxxx@127.0.0.1:1" is invalid`},
		{"[h:1 u:KPW@LEAK@10.0.0.1:9092]", "[h:1 xxxxx@10.0.0.1:9092]"},
		{"registry :KPWLEAK@sr:8081/x", "registry xxxxx@sr:8081/x"},
		{"mail alice@example.com and 'root'@'%'", "mail alice@example.com and 'root'@'%'"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	r := newRedactor("root", "p/w:long")
	if got := r.string("raw userinfo http://root:p/w:long@h/"); strings.Contains(got, "p/w:long") {
		t.Errorf("redactor left the literal password: %q", got)
	}
}

// The redacting handler scrubs messages, strings, errors, Stringers and
// groups.
func TestRedactingHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := slog.New(RedactingHandler(slog.NewTextHandler(&buf, nil)))
	u, _ := url.Parse("http://h:1/x?password=s3cret")
	l.With("a", "http://u:s3cret@h").Info("go http://u:s3cret@h/", "err", errors.New("Authorization: Basic s3cretToken=="),
		"url", u, slog.Group("g", "k", "http://u:s3cret@h/"))
	if strings.Contains(buf.String(), "s3cret") {
		t.Fatalf("log leaks the secret: %s", buf.String())
	}
	buf.Reset()
	j := slog.New(RedactingHandler(slog.NewJSONHandler(&buf, nil)))
	j.Info("pos", "end", struct {
		Topic string `json:"topic"`
	}{"orders"})
	if !strings.Contains(buf.String(), `"end":{"topic":"orders"}`) {
		t.Fatalf("a struct value lost its JSON shape: %s", buf.String())
	}
}

// LogBuffer is a goroutine-safe log sink for the package's tests (the
// doris_test tests use it too).
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *LogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *LogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A released FE puts user:password into the 307 Location (docs/doris-facts.md
// §1.2). A Location with a control byte fails inside net/http's transport
// ("malformed MIME header line" quoting the whole line) before any
// redirect code runs: neither the error of Stream Load and 2PC nor the
// client's and retryablehttp's logs (debug level, every retry) may quote
// the password.
func TestMalformedLocationDoesNotLeakPassword(t *testing.T) {
	t.Parallel()
	const secret = "s3cret pw"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				fmt.Fprintf(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://root@default_cluster:%s@127.0.0.1:1/api/demo/t/_stream_load\x01\r\nContent-Length: 0\r\n\r\n", secret)
			}()
		}
	}()
	logs := &LogBuffer{}
	c, err := NewClient(Config{FE: []string{"http://" + ln.Addr().String()}, User: "root", Password: secret, MaxRetries: 1,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, lerr := c.StreamLoad(context.Background(), loadReq("l"), strings.NewReader("a\n"))
	cerr := c.CommitTxn(context.Background(), "demo", 7)
	_, serr := c.LoadState(context.Background(), "demo", "l")
	for op, err := range map[string]error{"stream load": lerr, "commit": cerr, "load state": serr} {
		if err == nil {
			t.Fatalf("%s: no error", op)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s error leaks the password: %v", op, err)
		}
		if !strings.Contains(err.Error(), "malformed MIME header") {
			t.Errorf("%s error lost its cause: %v", op, err)
		}
	}
	if !IsAmbiguous(cerr) {
		t.Errorf("commit after a broken answer: IsAmbiguous false: %v", cerr)
	}
	if l := logs.String(); strings.Contains(l, "s3cret") || !strings.Contains(l, "request failed") {
		t.Errorf("logs leak the password or miss retryablehttp's line:\n%s", l)
	}
}
