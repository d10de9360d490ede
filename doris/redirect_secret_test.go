package doris

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// §1.2: the FE's 307 Location embeds user:password. Even a Location the
// client cannot parse must not put the password into an error.
func TestUnparseableLocationDoesNotLeakPassword(t *testing.T) {
	t.Parallel()
	const secret = "pw with space"
	fe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://root@default_cluster:"+secret+"@127.0.0.1:1"+r.URL.Path+"?")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	t.Cleanup(fe.Close)
	c, err := NewClient(Config{FE: []string{fe.URL}, User: "root", Password: secret, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, lerr := c.StreamLoad(context.Background(), loadReq("l"), strings.NewReader("a\n"))
	cerr := c.CommitTxn(context.Background(), "demo", 7)
	for op, err := range map[string]error{"stream load": lerr, "commit": cerr} {
		if err == nil {
			t.Fatalf("%s: no error", op)
		}
		if strings.Contains(err.Error(), "space@") || strings.Contains(err.Error(), secret) {
			t.Errorf("%s error leaks the password: %v", op, err)
		}
	}
}
