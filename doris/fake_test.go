package doris

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Test credentials: the password must never appear in an error string.
const (
	testUser     = "root"
	testPassword = "s3cret-pw"
)

// fakeDoris is an FE on "localhost" and a BE on "127.0.0.1" (different
// hostnames, so Go really strips Authorization on the cross-host 307,
// net/http's shouldCopyHeaderOnRedirect), answering with docs/doris-facts.md's exact shapes. Each test
// programs the BE answers.
type fakeDoris struct {
	t      *testing.T
	fe, be *httptest.Server
	feURL  string // http://localhost:port
	beURL  string // http://127.0.0.1:port

	// beLoad answers a BE stream load. It may read r.Body (early answers
	// don't); nil answers Success with the bytes read.
	beLoad func(w http.ResponseWriter, r *http.Request) string
	// be2PC answers a BE 2PC call; nil answers Success.
	be2PC func(w http.ResponseWriter, r *http.Request) string
	// feLoadAnswer, when set, is the FE's 200 answer instead of a 307.
	feLoadAnswer string
	// loadState answers get_load_state.
	loadState string

	feLoads, feExpect, beLoads, be2PCs atomic.Int64
	feReadsBody                        bool         // the FE tries to read the body before its 307
	feBodyBytes                        atomic.Int64 // body bytes the FE read
	beBodyBytes                        atomic.Int64

	mu       sync.Mutex
	beHeader http.Header // last BE stream load / 2PC request headers
}

func newFakeDoris(t *testing.T) *fakeDoris {
	t.Helper()
	f := &fakeDoris{t: t}
	f.be = httptest.NewServer(http.HandlerFunc(f.serveBE))
	f.fe = httptest.NewServer(http.HandlerFunc(f.serveFE))
	t.Cleanup(f.fe.Close)
	t.Cleanup(f.be.Close)
	f.beURL = f.be.URL
	f.feURL = strings.Replace(f.fe.URL, "127.0.0.1", "localhost", 1)
	return f
}

func (f *fakeDoris) config() Config {
	return Config{FE: []string{f.feURL}, User: testUser, Password: testPassword, MaxRetries: 1}
}

func (f *fakeDoris) client(cfg Config) *Client {
	f.t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		f.t.Fatalf("NewClient: %v", err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

func (f *fakeDoris) authOK(r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	return ok && u == testUser && p == testPassword
}

// redirect answers the FE 307 like RestBaseController.redirectTo (§1.2):
// user:password in the Location, same path, trailing "?".
func (f *fakeDoris) redirect(w http.ResponseWriter, r *http.Request) {
	loc := strings.Replace(f.beURL, "http://", "http://"+testUser+"@default_cluster:"+testPassword+"@", 1) + r.URL.Path + "?" + r.URL.RawQuery
	w.Header().Set("Location", loc)
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	w.WriteHeader(http.StatusTemporaryRedirect)
}

func (f *fakeDoris) serveFE(w http.ResponseWriter, r *http.Request) {
	switch {
	case !f.authOK(r):
		// §1.2: HTTP 200 with ResponseBody.
		io.WriteString(w, `{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`)
	case strings.HasSuffix(r.URL.Path, "/_stream_load"):
		f.feLoads.Add(1)
		if r.Header.Get("Expect") == "" {
			io.WriteString(w, `{"status":"FAILED","msg":"There is no 100-continue header"}`)
			return
		}
		f.feExpect.Add(1)
		if f.feLoadAnswer != "" {
			io.WriteString(w, f.feLoadAnswer)
			return
		}
		if f.feReadsBody {
			// A FE that asks for the body (Go's server sends 100 Continue on
			// the first Read): it must still get 0 bytes. The deadline only
			// bounds how long we watch.
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, _ := io.Copy(io.Discard, r.Body)
			f.feBodyBytes.Add(n)
		}
		f.redirect(w, r)
	case strings.HasSuffix(r.URL.Path, "/_stream_load_2pc"):
		f.redirect(w, r)
	case strings.HasSuffix(r.URL.Path, "/get_load_state"):
		io.WriteString(w, f.loadState)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeDoris) serveBE(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.beHeader = r.Header.Clone()
	f.mu.Unlock()
	if !f.authOK(r) {
		// §1.3: BE answers Fail JSON, HTTP 200.
		io.WriteString(w, loadJSON(-1, r.Header.Get("label"), "Fail", "[NOT_AUTHORIZED]no valid Basic authorization", 0))
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/_stream_load"):
		f.beLoads.Add(1)
		if f.beLoad != nil {
			if s := f.beLoad(w, r); s != "" {
				io.WriteString(w, s)
			}
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		f.beBodyBytes.Add(n)
		io.WriteString(w, loadJSON(42, r.Header.Get("label"), "Success", "OK", n))
	case strings.HasSuffix(r.URL.Path, "/_stream_load_2pc"):
		f.be2PCs.Add(1)
		if f.be2PC != nil {
			if s := f.be2PC(w, r); s != "" {
				io.WriteString(w, s)
			}
			return
		}
		io.WriteString(w, "{\n    \"status\": \"Success\",\n    \"msg\": \"transaction ["+r.Header.Get("txn_id")+"] commit successfully.\"\n}")
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeDoris) lastBEHeader() http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.beHeader
}

// loadJSON renders a BE answer in StreamLoadContext::to_json's field order
// (§2.1), pretty-printed with 4 spaces plus "\n".
func loadJSON(txnID int64, label, status, msg string, bytes int64) string {
	m := fmt.Sprintf(`{"TxnId":%d,"Label":%q,"Comment":"","TwoPhaseCommit":"true","Status":%q,"Message":%q,`+
		`"NumberTotalRows":%d,"NumberLoadedRows":%d,"NumberFilteredRows":0,"NumberUnselectedRows":0,"LoadBytes":%d,`+
		`"LoadTimeMs":3,"BeginTxnTimeMs":1,"StreamLoadPutTimeMs":1,"ReadDataTimeMs":0,"WriteDataTimeMs":1,`+
		`"ReceiveDataTimeMs":0,"CommitAndPublishTimeMs":0}`, txnID, label, status, msg, bytes, bytes, bytes)
	var out strings.Builder
	var v json.RawMessage = []byte(m)
	b, _ := json.MarshalIndent(v, "", "    ")
	out.Write(b)
	out.WriteString("\n")
	return out.String()
}

// genReader yields n bytes of CSV-ish data without holding them, counting
// what was read.
type genReader struct {
	left int64
	read atomic.Int64
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	for i := range p {
		if i%16 == 15 {
			p[i] = '\n'
		} else {
			p[i] = 'a' + byte(i%16)
		}
	}
	g.left -= int64(len(p))
	g.read.Add(int64(len(p)))
	return len(p), nil
}

// infiniteReader never ends; for early answers.
type infiniteReader struct{ read atomic.Int64 }

func (r *infiniteReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.read.Add(int64(len(p)))
	return len(p), nil
}
