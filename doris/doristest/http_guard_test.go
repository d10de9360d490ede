package doristest

import (
	"net/http"
	"strings"
	"testing"
)

// Issue 25: the FE and BE HTTP endpoints refuse a DNS-rebound Host and a
// foreign Origin with 403 (on main they answered: a page of evil.example
// resolving to 127.0.0.1 could drive Stream Load and 2PC), answer a
// cross-site POST 405 and a small call's oversized body (413), and still
// take what real clients send: a Stream Load PUT with any content, no
// Origin, a loopback or the URL's own Host.
func TestFEBEGuardRefusesRebindingAndForgedRequests(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.CreateDatabase("demo")
	for _, base := range []string{s.FEURL(), s.BEURL()} {
		put := func(h hdr, body string) int {
			return adminReq(t, base, "PUT", "/api/demo/_stream_load_2pc", h, body)
		}
		for name, h := range map[string]hdr{
			"rebound Host":     {"Host": "evil.example:8030", "txn_id": "1", "txn_operation": "commit"},
			"foreign Origin":   {"Origin": "http://evil.example", "txn_id": "1", "txn_operation": "commit"},
			"opaque Origin":    {"Origin": "null", "txn_id": "1", "txn_operation": "commit"},
			"rebound GET Host": {"Host": "evil.example"},
		} {
			if got := put(h, ""); got != http.StatusForbidden {
				t.Errorf("%s %s: HTTP %d, want 403", base, name, got)
			}
		}
		if got := adminReq(t, base, "GET", "/api/demo/get_load_state?label=x", hdr{"Host": "attacker.test"}, ""); got != http.StatusForbidden {
			t.Errorf("%s rebound get_load_state: HTTP %d, want 403", base, got)
		}
		if got := adminReq(t, base, "POST", "/api/demo/t/_stream_load", hdr{"Content-Type": "text/plain"}, "a"); got != http.StatusMethodNotAllowed {
			t.Errorf("%s text/plain POST: HTTP %d, want 405", base, got)
		}
		if got := put(hdr{"txn_id": "1", "txn_operation": "commit"}, strings.Repeat("x", maxSmallBody+1)); got != http.StatusRequestEntityTooLarge {
			t.Errorf("%s 2PC with a %d-byte body: HTTP %d, want 413", base, maxSmallBody+1, got)
		}
		// What real clients send passes the guard (the 2PC answer is
		// Doris's, HTTP 200 with a JSON status).
		for name, h := range map[string]hdr{
			"loopback Host": {"Host": "localhost", "txn_id": "1", "txn_operation": "commit"},
			"URL Host":      {"txn_id": "1", "txn_operation": "commit"},
			"same Origin":   {"Origin": base, "txn_id": "1", "txn_operation": "commit"},
		} {
			if got := put(h, ""); got == http.StatusForbidden || got == http.StatusRequestEntityTooLarge {
				t.Errorf("%s %s: HTTP %d, refused by the guard", base, name, got)
			}
		}
	}
}
