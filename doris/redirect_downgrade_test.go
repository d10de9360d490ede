package doris_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
)

// A real FE redirects to http://<be> even when it serves https itself
// (docs/doris-facts.md §1.2). By default the client refuses to send the
// credentials there (a *RedirectError naming the host and the key); with
// RedirectAllowHTTP the load works, and the client warns once that the
// body and credentials then travel unencrypted.
func TestHTTPSFERedirectToHTTPBEWarnsOnce(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		testHTTPSToHTTP(t, allow)
	}
}

func testHTTPSToHTTP(t *testing.T, allow bool) {
	var beHits atomic.Int32
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		beHits.Add(1)
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"TxnId": 7, "Label": "l", "Comment": "", "TwoPhaseCommit": "true", "Status": "Success", "Message": "OK",
"NumberTotalRows": 1, "NumberLoadedRows": 1, "NumberFilteredRows": 0, "NumberUnselectedRows": 0, "LoadBytes": 2}`+"\n")
	}))
	t.Cleanup(be.Close)
	fe := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, be.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(fe.Close)
	logs := &doris.LogBuffer{}
	tc := fe.Client().Transport.(*http.Transport).TLSClientConfig
	c, err := doris.NewClient(doris.Config{FE: []string{fe.URL}, User: "root", TLS: tc, RedirectAllowHTTP: allow,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for i := 0; i < 2; i++ {
		req := doris.LoadRequest{DB: "db", Table: "t", Label: "l", Format: "json", TwoPhaseCommit: true}
		_, err := c.StreamLoad(context.Background(), req, strings.NewReader("{}"))
		if !allow {
			var re *doris.RedirectError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "doris.redirect_allow_http") || doris.IsAmbiguous(err) {
				t.Fatalf("load %d without RedirectAllowHTTP: %v, want a *RedirectError naming doris.redirect_allow_http", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
	}
	if !allow {
		if n := beHits.Load(); n != 0 {
			t.Fatalf("the http BE got %d requests after a refused redirect", n)
		}
		return
	}
	if n := strings.Count(logs.String(), "plain-http BE"); n != 1 {
		t.Errorf("downgrade warnings = %d, want 1; logs:\n%s", n, logs.String())
	}
}
