package doristest

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

func admin(t *testing.T, s *Server, method, path, body string, wantCode int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, s.AdminURL()+path, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != wantCode {
		t.Fatalf("%s %s: HTTP %d, want %d", method, path, resp.StatusCode, wantCode)
	}
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("%s %s: decode: %v", method, path, err)
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{"list": v}
	}
	return m
}

func TestAdmin_DrivesTheGoAPI(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk))

	// Faults: add, list, hit, delete.
	m := admin(t, s, "POST", "/faults", `{"op":"begin","label":"f1","err":{"message":"boom"}}`, 200)
	id := int64(m["id"].(float64))
	res, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "f1"})
	wantEq(t, "Message", res["Message"], any("boom"))
	list := admin(t, s, "GET", "/faults", "", 200)["list"].([]any)
	wantEq(t, "hits", list[0].(map[string]any)["hits"], any(float64(1)))
	admin(t, s, "DELETE", "/faults/"+itoa(id), "", 200)
	admin(t, s, "DELETE", "/faults/"+itoa(id), "", 404)
	admin(t, s, "POST", "/faults", `{"op":"bogus"}`, 400)

	// Precommit timeout now, and via the clock.
	precommit(t, s, "p1", "1\ta\n")
	m = admin(t, s, "POST", "/txns/timeout-precommitted", "", 200)
	wantEq(t, "aborted", m["aborted"], any(float64(1)))
	precommit(t, s, "p2", "1\ta\n")
	admin(t, s, "POST", "/clock/advance", `{"seconds":3601}`, 200)
	wantEq(t, "p2", s.LabelState(testDB, "p2"), doris.TxnAborted)

	// Config.
	admin(t, s, "POST", "/config", `{"key":"label_num_threshold","value":5}`, 200)
	v, _ := s.FEConfigValue(ConfLabelNumThreshold)
	wantEq(t, "threshold", v, 5)
	admin(t, s, "POST", "/config", `{"key":"nope","value":5}`, 400)
	wantEq(t, "GET /config", admin(t, s, "GET", "/config", "", 200)[ConfLabelNumThreshold], any(float64(5)))

	// Txns and labels.
	txns := admin(t, s, "GET", "/txns?db=demo", "", 200)["list"].([]any)
	wantEq(t, "txns", len(txns), 2)
	m = admin(t, s, "POST", "/labels/expire?db=demo", "", 200)
	wantEq(t, "removed", m["removed"], any(float64(2)))
	wantEq(t, "p1", s.LabelState(testDB, "p1"), doris.TxnUnknown)

	// Counting mode.
	admin(t, s, "POST", "/tables/demo/orders/counting", `{"on":true}`, 200)
	load(t, s, "orders", "1\ta\n2\tb\n", hdr{"label": "cnt"})
	m = admin(t, s, "GET", "/tables/demo/orders/counts", "", 200)
	wantEq(t, "counted rows", m["rows"], any(float64(2)))
	admin(t, s, "POST", "/tables/demo/nope/counting", `{"on":true}`, 404)

	// BE down / up.
	admin(t, s, "POST", "/be/down", "", 200)
	if _, err := doErr("PUT", s.BEURL()+"/api/demo/orders/_stream_load", hdr{}, ""); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("BE down: %v", err)
	}
	admin(t, s, "POST", "/be/up", "", 200)
	res, _ = load(t, s, "orders", "", hdr{"label": "up"})
	wantEq(t, "after up", res["Status"], any("Success"))
}

func TestAdmin_ClockNeedsManualClock(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	admin(t, s, "POST", "/clock/advance", `{"seconds":1}`, 409)
}

func TestAdmin_FaultWaitReleaseAndState(t *testing.T) {
	t.Parallel()
	s := newServer(t)

	// A blocked 2PC commit, driven only over the admin endpoint.
	precommit(t, s, "a1", "1\ta\n")
	id := itoa(int64(admin(t, s, "POST", "/faults", `{"op":"commit","label":"a1","block":true}`, 200)["id"].(float64)))
	done := putAsync(s.BEURL()+"/api/demo/_stream_load_2pc", hdr{"label": "a1", "txn_operation": "commit"}, "")
	m := admin(t, s, "POST", "/faults/"+id+"/wait", `{"hits":1}`, 200)
	wantEq(t, "hits after wait", m["hits"], any(float64(1)))
	wantEq(t, "GET /labels while blocked", admin(t, s, "GET", "/labels/demo/a1", "", 200)["state"], any("PRECOMMITTED"))
	admin(t, s, "POST", "/faults/"+id+"/release", "", 200)
	if m := <-done; m == nil || m["status"] != "Success" {
		t.Fatalf("commit after release: %v", m)
	}
	wantEq(t, "GET /labels", admin(t, s, "GET", "/labels/demo/a1", "", 200)["state"], any("VISIBLE"))
	m = admin(t, s, "GET", "/faults/"+id, "", 200)
	wantEq(t, "GET /faults/{id} active", m["active"], any(false))
	admin(t, s, "GET", "/faults/99", "", 404)
	admin(t, s, "POST", "/faults/"+id+"/wait", `{"hits":"x"}`, 400)

	// Publish hold, databases, tables, rows, cleaner, FE down/up.
	admin(t, s, "POST", "/publish", `{"hold":true}`, 200)
	res, _ := load(t, s, "orders", "2\tb\n", hdr{"label": "held"})
	wantEq(t, "held", res["Status"], any("Publish Timeout"))
	admin(t, s, "POST", "/publish", `{"hold":false}`, 200)
	wantEq(t, "after hold", s.LabelState(testDB, "held"), doris.TxnVisible)
	rows := admin(t, s, "GET", "/tables/demo/orders/rows", "", 200)["list"].([]any)
	wantEq(t, "rows", len(rows), 2)
	admin(t, s, "POST", "/databases/other", "", 200)
	admin(t, s, "POST", "/databases/other", "", 409)
	admin(t, s, "POST", "/databases/other/tables", `{"ddl":"CREATE TABLE t (k BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"}`, 200)
	tables, err := s.Tables("other")
	if err != nil || len(tables) != 1 || tables[0] != "t" {
		t.Fatalf("tables of other = %v, %v", tables, err)
	}
	admin(t, s, "GET", "/tables/other/nope/rows", "", 404)
	admin(t, s, "POST", "/cleaner/run", "", 200)
	admin(t, s, "POST", "/fe/down", "", 200)
	if _, err := doErr("GET", s.FEURL()+"/api/demo/get_load_state?label=a1", hdr{}, ""); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("FE down: %v", err)
	}
	admin(t, s, "POST", "/fe/up", "", 200)
}

// A fault wait over the admin endpoint gives up when the server closes, so
// Close never waits on it (the handler is called directly: once closed, the
// admin listener is gone).
func TestAdmin_FaultWaitEndsOnClose(t *testing.T) {
	t.Parallel()
	s, err := NewServer(SeedDatabases(testDB))
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Fault(Fault{Op: FaultBegin, Observe: true, Count: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	rec := httptest.NewRecorder()
	s.adminWaitFault(rec, httptest.NewRequest("POST", "/faults/1/wait", strings.NewReader(`{"hits":5}`)), h)
	wantEq(t, "HTTP status", rec.Code, http.StatusConflict)
	if !strings.Contains(rec.Body.String(), "0 of 5 hits") {
		t.Fatalf("body %q does not name the hits", rec.Body.String())
	}
}
