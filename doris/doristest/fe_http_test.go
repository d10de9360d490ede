package doristest

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

func TestFE_StreamLoad_RequiresExpect_1_2(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	resp, body := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load", hdr{"label": "x"}, "1\ta\n")
	wantEq(t, "HTTP", resp.StatusCode, 200)
	wantEq(t, "body", body, `{"status":"FAILED","msg":"There is no 100-continue header"}`)
}

func TestFE_StreamLoad_Unauthorized_1_2(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	resp, body := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load", hdr{"-auth": "", "Expect": "100-continue"}, "")
	wantEq(t, "HTTP", resp.StatusCode, 200)
	wantEq(t, "body", body, `{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`)
}

func TestFE_StreamLoad_307ToBE_1_2(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	body := &countingReader{r: strings.NewReader("1\ta\n")}
	req, _ := http.NewRequest("PUT", s.FEURL()+"/api/demo/orders/_stream_load", body)
	req.ContentLength = 4
	req.SetBasicAuth("root", "")
	req.Header.Set("Expect", "100-continue")
	c := &http.Client{
		Transport:     &http.Transport{ExpectContinueTimeout: time.Minute},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wantEq(t, "HTTP", resp.StatusCode, http.StatusTemporaryRedirect)
	// Released FEs embed user:password@ (RestBaseController.getRedirectUrL,
	// docs/doris-facts.md §12 "§1.2 Location userinfo"); "root" with an empty
	// password is "root:@".
	wantEq(t, "Location", resp.Header.Get("Location"), withUserInfo(t, s.BEURL(), "root", "")+"/api/demo/orders/_stream_load?")
	wantEq(t, "Content-Type", resp.Header.Get("Content-Type"), "text/html;charset=utf-8")
	wantEq(t, "body bytes sent to the FE", body.n.Load(), 0)
	// With a query string, it is passed through raw.
	resp, _ = do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load?a=1&b=%20", hdr{"Expect": "100-continue"}, "")
	wantEq(t, "Location", resp.Header.Get("Location"), withUserInfo(t, s.BEURL(), "root", "")+"/api/demo/orders/_stream_load?a=1&b=%20")
}

// withUserInfo puts user:password@ into base (an http(s)://host:port URL).
func withUserInfo(t *testing.T, base, user, password string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

// RedirectWithoutUserInfo: the newer-behaviour mode, no userinfo at all.
func TestFE_RedirectWithoutUserInfo_1_2(t *testing.T) {
	t.Parallel()
	s := newServer(t, RedirectWithoutUserInfo())
	resp, _ := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load", hdr{"Expect": "100-continue"}, "")
	wantEq(t, "Location", resp.Header.Get("Location"), s.BEURL()+"/api/demo/orders/_stream_load?")
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.User != nil {
		t.Fatal("Location carries userinfo")
	}
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Go's client drops Authorization on a redirect to another host (net/http
// shouldCopyHeaderOnRedirect); FE (localhost) and BE (127.0.0.1) differ, so without userinfo in the
// Location a client that does not re-add it fails at the BE.
func TestFE_Redirect_AuthorizationNotForwardedAcrossHosts_1_2(t *testing.T) {
	t.Parallel()
	s := newServer(t, RedirectWithoutUserInfo())
	send := func(label string) map[string]any {
		req, _ := http.NewRequest("PUT", s.FEURL()+"/api/demo/orders/_stream_load", strings.NewReader("1\ta\n"))
		req.SetBasicAuth("root", "")
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("label", label)
		c := &http.Client{Transport: &http.Transport{}}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return decode(t, string(b))
	}
	m := send("auto")
	wantEq(t, "Message", m["Message"], any("[NOT_AUTHORIZED]no valid Basic authorization"))

	// Manual redirect with Authorization re-added works.
	resp, _ := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load", hdr{"Expect": "100-continue", "label": "manual"}, "1\ta\n")
	_, body := do(t, "PUT", resp.Header.Get("Location"), hdr{"Expect": "100-continue", "label": "manual"}, "1\ta\n")
	wantEq(t, "Status", decode(t, body)["Status"], any("Success"))
	wantEq(t, "state", s.LabelState(testDB, "manual"), doris.TxnVisible)
}

// The default (userinfo in Location): Go's own redirect-following client
// turns the userinfo back into Authorization at the BE, even across hosts
// and with a password that needs escaping, so the Go SDK's plain client
// works at the printed FE URL.
func TestFE_RedirectWithUserInfo_1_2(t *testing.T) {
	t.Parallel()
	const pw = "p@ss:w/rd?#%"
	s := newServer(t, Users(map[string]string{"root": pw}))
	req, _ := http.NewRequest("PUT", s.FEURL()+"/api/demo/orders/_stream_load", strings.NewReader("1\ta\n"))
	req.SetBasicAuth("root", pw)
	req.Header.Set("Expect", "100-continue")
	req.Header.Set("label", "ui")
	c := &http.Client{Transport: &http.Transport{}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	wantEq(t, "Status", decode(t, string(b))["Status"], any("Success"))
}

func TestFE_2PC_Redirect_3_1(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, body := do(t, "PUT", s.FEURL()+"/api/demo/_stream_load_2pc", hdr{"txn_operation": "commit"}, "")
	wantEq(t, "no id", body, `{"status":"FAILED","msg":"No transaction id or label selected."}`)
	_, body = do(t, "PUT", s.FEURL()+"/api/demo/_stream_load_2pc", hdr{"txn_id": "1"}, "")
	wantEq(t, "no op", body, `{"status":"FAILED","msg":"No transaction operation('commit' or 'abort') selected."}`)
	// No Expect needed on the 2PC route.
	id := precommit(t, s, "fe2pc", "1\ta\n")
	resp, _ := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load_2pc", hdr{"txn_id": itoa(id), "txn_operation": "commit"}, "")
	wantEq(t, "HTTP", resp.StatusCode, http.StatusTemporaryRedirect)
	wantEq(t, "Location", resp.Header.Get("Location"), withUserInfo(t, s.BEURL(), "root", "")+"/api/demo/orders/_stream_load_2pc?")
	_, body = do(t, "PUT", resp.Header.Get("Location"), hdr{"txn_id": itoa(id), "txn_operation": "commit"}, "")
	wantEq(t, "commit", decode(t, body)["status"], any("Success"))
}

func TestGetLoadState_Bodies_6_1(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	get := func(db, q string, h hdr) string {
		_, body := do(t, "GET", s.FEURL()+"/api/"+db+"/get_load_state"+q, h, "")
		return body
	}
	wantEq(t, "no label", get("demo", "", hdr{}), `{"msg":"Bad Request","code":403,"data":"No label selected","count":0}`)
	wantEq(t, "unknown", get("demo", "?label=nope", hdr{}), `{"msg":"success","code":0,"data":"UNKNOWN","count":0}`)
	wantEq(t, "no db", get("nodb", "?label=x", hdr{}), `{"msg":"Error","code":1,"data":"errCode = 7, detailMessage = unknown databases, dbName=nodb","count":0}`)
	wantEq(t, "auth", get("demo", "?label=x", hdr{"-auth": ""}), `{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`)
	precommit(t, s, "gs", "1\ta\n")
	wantEq(t, "precommitted", get("demo", "?label=gs", hdr{}), `{"msg":"success","code":0,"data":"PRECOMMITTED","count":0}`)
	txn2pc(t, s, hdr{"label": "gs", "txn_operation": "commit"})
	wantEq(t, "visible", get("demo", "?label=gs", hdr{}), `{"msg":"success","code":0,"data":"VISIBLE","count":0}`)
}

func TestFE_NotFoundRoutes_8(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	resp, err := doErr("POST", s.FEURL()+"/api/demo/orders/_stream_load", hdr{}, "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST _stream_load: HTTP %d, want 405", resp.StatusCode)
	}
	if errors.Is(err, io.EOF) {
		t.Fatal("unexpected EOF")
	}
	// GET shares a path pattern with _schema (fe_rest.go) and stays 405.
	resp, err = doErr("GET", s.FEURL()+"/api/demo/orders/_stream_load", hdr{}, "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET _stream_load: HTTP %d, want 405", resp.StatusCode)
	}
}
