package doris

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Issue 25: text Doris sends (a Stream Load Message, a 2PC msg, an error
// body) enters errors with its control characters escaped (\x1b, \n), so
// an error printed or logged cannot drive a terminal or forge a line (on
// main they were raw).
func TestDorisTextInErrorsIsEscaped(t *testing.T) {
	t.Parallel()
	const hostile = `\u001b[2J\u001b]0;owned\u0007\nforged: yes`
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "_2pc") {
			io.WriteString(w, `{"status":"ANALYSIS_ERROR","msg":"`+hostile+`"}`)
			return
		}
		if strings.Contains(r.URL.Path, "get_load_state") {
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "\x1b[31mproxy\nerror")
			return
		}
		io.WriteString(w, `{"TxnId": 7, "Label": "l", "TwoPhaseCommit": "true", "Status": "Fail", "Message": "`+hostile+`"}`)
	}))
	t.Cleanup(be.Close)
	c, err := NewClient(Config{FE: []string{be.URL}, BE: []string{be.URL}, User: "root", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()
	_, lerr := c.StreamLoad(ctx, loadReq("l"), strings.NewReader("{}\n"))
	cerr := c.CommitTxn(ctx, "demo", 7)
	_, serr := c.LoadState(ctx, "demo", "l")
	for name, err := range map[string]error{"stream load": lerr, "commit": cerr, "load state": serr} {
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\x1b\x07\n") || !strings.Contains(msg, `\x1b`) {
			t.Errorf("%s: error %q, want control characters escaped", name, msg)
		}
	}
}
