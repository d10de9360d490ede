package doristest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris/schema"
)

const testDB = "demo"

// ordersTable is a Duplicate Key table (id BIGINT, v VARCHAR(32)), built
// directly so these tests do not depend on the DDL parser.
func ordersTable(name string) *schema.Table {
	return &schema.Table{
		Name: name,
		Columns: []schema.Column{
			{Name: "id", Type: "BIGINT", Nullable: true},
			{Name: "v", Type: "VARCHAR(32)", Nullable: true},
		},
		Keys:          schema.DuplicateKeys,
		KeyColumns:    []string{"id"},
		DistributedBy: []string{"id"},
		Buckets:       1,
		Properties:    map[string]string{"replication_num": "1"},
	}
}

// newServer starts a server with database "demo" and table "orders".
func newServer(t *testing.T, opts ...Opt) *Server {
	t.Helper()
	s, err := NewServer(append([]Opt{SeedDatabases(testDB)}, opts...)...)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(s.Close)
	if err := s.CreateTableSchema(testDB, ordersTable("orders")); err != nil {
		t.Fatalf("CreateTableSchema: %v", err)
	}
	return s
}

// noRedirect is a client that returns 307s to the caller.
func noRedirect() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type hdr map[string]string

// do sends one request with root/"" Basic auth unless hdr has "-auth".
func do(t *testing.T, method, url string, h hdr, body string) (*http.Response, string) {
	t.Helper()
	resp, err := doErr(method, url, h, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(b)
}

func doErr(method, url string, h hdr, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if _, ok := h["-auth"]; !ok {
		req.SetBasicAuth("root", "")
	}
	for k, v := range h {
		if k == "-auth" {
			continue
		}
		req.Header.Set(k, v)
	}
	c := noRedirect()
	defer c.CloseIdleConnections()
	return c.Do(req)
}

// load sends a Stream Load straight to the BE and decodes the reply.
func load(t *testing.T, s *Server, table, body string, h hdr) (map[string]any, string) {
	t.Helper()
	resp, raw := do(t, http.MethodPut, s.BEURL()+"/api/"+testDB+"/"+table+"/_stream_load", h, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream load: HTTP %d: %s", resp.StatusCode, raw)
	}
	return decode(t, raw), raw
}

// txn2pc sends a 2PC request straight to the BE.
func txn2pc(t *testing.T, s *Server, h hdr) (status, msg, raw string) {
	t.Helper()
	resp, raw := do(t, http.MethodPut, s.BEURL()+"/api/"+testDB+"/_stream_load_2pc", h, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("2pc: HTTP %d: %s", resp.StatusCode, raw)
	}
	m := decode(t, raw)
	return m["status"].(string), m["msg"].(string), raw
}

func decode(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %q: %v", raw, err)
	}
	return m
}

func num(t *testing.T, m map[string]any, key string) int64 {
	t.Helper()
	n, ok := m[key].(json.Number)
	if !ok {
		t.Fatalf("%s = %#v, want a JSON number", key, m[key])
	}
	v, err := n.Int64()
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return v
}

func wantEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// precommit runs a 2PC load and returns its txn id.
func precommit(t *testing.T, s *Server, label, body string) int64 {
	t.Helper()
	m, raw := load(t, s, "orders", body, hdr{"label": label, "two_phase_commit": "true"})
	if m["Status"] != "Success" {
		t.Fatalf("precommit %s: %s", label, raw)
	}
	return num(t, m, "TxnId")
}

// putAsync sends a PUT (root/"" Basic auth) in the background; the channel
// gets the decoded JSON reply, or nil on a transport error.
func putAsync(url string, h hdr, body string) <-chan map[string]any {
	done := make(chan map[string]any, 1)
	go func() {
		resp, err := doErr(http.MethodPut, url, h, body)
		if err != nil {
			done <- nil
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		done <- m
	}()
	return done
}
