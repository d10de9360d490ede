package srtest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

// Issue 25: the sandbox registry refuses what a web page could make a
// browser send (on main a cross-site text/plain POST with a rebound Host
// registered a schema, and a 400 MB POST was held whole): a rebound Host or
// foreign Origin gets 403, a POST or PUT without a registry JSON type 415,
// a body over MaxRequestBytes 413; nothing is registered. franz-go's sr
// and curl as Confluent's docs write it still work.
func TestSandboxRegistryGuard(t *testing.T) {
	t.Parallel()
	s, err := NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	const schema = `{"schema":"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"}]}"}`
	send := func(method, path, ct string, h map[string]string, body string) int {
		req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		for k, v := range h {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	const v1 = "application/vnd.schemaregistry.v1+json"
	for _, tc := range []struct {
		name, method, ct string
		h                map[string]string
		body             string
		want             int
	}{
		{"cross-site text/plain, rebound Host", "POST", "text/plain", map[string]string{"Host": "evil.example:8081"}, schema, 403},
		{"foreign Origin", "POST", v1, map[string]string{"Origin": "http://evil.example"}, schema, 403},
		{"text/plain", "POST", "text/plain", nil, schema, 415},
		{"no Content-Type", "POST", "", nil, schema, 415},
		{"form", "POST", "application/x-www-form-urlencoded", nil, schema, 415},
		{"PUT config text/plain", "PUT", "text/plain", nil, `{"compatibility":"NONE"}`, 415},
		{"over the bound", "POST", v1, nil, `{"schema":"` + strings.Repeat("x", MaxRequestBytes) + `"}`, 413},
	} {
		path := "/subjects/s/versions"
		if tc.method == "PUT" {
			path = "/config"
		}
		if got := send(tc.method, path, tc.ct, tc.h, tc.body); got != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := send("GET", "/subjects", "", nil, ""); got != 200 {
		t.Fatalf("GET /subjects: %d", got)
	}
	// curl -X POST -H "Content-Type: application/vnd.schemaregistry.v1+json" --data '{"schema": ...}' (Confluent's docs)
	if got := send("POST", "/subjects/curl/versions", v1, nil, schema); got != 200 {
		t.Fatalf("curl-style register: HTTP %d", got)
	}
	cl, err := sr.NewClient(sr.URLs(s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := cl.CreateSchema(t.Context(), "franz", sr.Schema{Schema: `{"type":"record","name":"F","fields":[{"name":"a","type":"long"}]}`})
	if err != nil {
		t.Fatalf("franz-go sr register: %v", err)
	}
	subjects, err := cl.Subjects(t.Context())
	if err != nil || len(subjects) != 2 || ss.ID == 0 {
		t.Fatalf("subjects %v (%v), want curl and franz only: a refused request registered something", subjects, err)
	}
}
