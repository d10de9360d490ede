package doristest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
)

func TestFault_ApplyThenDropCommit_TxnVisible(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "atd", "1\ta\n")
	h, err := s.Fault(Fault{Op: FaultCommit, Label: "atd", ApplyThenDrop: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = doErr("PUT", s.BEURL()+"/api/demo/_stream_load_2pc", hdr{"txn_id": itoa(id), "txn_operation": "commit"}, "")
	if err == nil {
		t.Fatal("want a transport error")
	}
	wantEq(t, "hits", h.Hits(), 1)
	tx, _ := s.TxnByID(testDB, id)
	wantEq(t, "state", tx.Status, doris.TxnVisible)
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 1)
	// Count 0 means one call: the next commit answers normally.
	_, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "msg", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already visible, not pre-committed.")
}

func TestFault_RefuseCommit_StaysPrecommitted(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "rf", "1\ta\n")
	if _, err := s.Fault(Fault{Op: FaultCommit, Refuse: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := doErr("PUT", s.BEURL()+"/api/demo/_stream_load_2pc", hdr{"txn_id": itoa(id), "txn_operation": "commit"}, ""); err == nil {
		t.Fatal("want a transport error")
	}
	wantEq(t, "state", s.LabelState(testDB, "rf"), doris.TxnPrecommitted)
}

func TestFault_ErrOnCommitAndBegin(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "e", "1\ta\n")
	if _, err := s.Fault(Fault{Op: FaultCommit, Err: &FaultErr{Status: "ANALYSIS_ERROR", Message: "get tableList write lock timeout, tableList=(orders)"}}); err != nil {
		t.Fatal(err)
	}
	st, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "status", st, "ANALYSIS_ERROR")
	wantEq(t, "msg", msg, "get tableList write lock timeout, tableList=(orders)")
	wantEq(t, "state", s.LabelState(testDB, "e"), doris.TxnPrecommitted)

	h, _ := s.Fault(Fault{Op: FaultBegin, Table: "orders", Count: 2})
	for range 3 {
		load(t, s, "orders", "1\ta\n", hdr{})
	}
	wantEq(t, "hits", h.Hits(), 2)
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "after"})
	wantEq(t, "Status", m["Status"], any("Success"))
}

func TestFault_ErrMidStream_Aborts(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	if _, err := s.Fault(Fault{Op: FaultStream, Err: &FaultErr{Message: "[INTERNAL_ERROR]cancelled"}}); err != nil {
		t.Fatal(err)
	}
	m, _ := load(t, s, "orders", "1\ta\n2\tb\n", hdr{"label": "ms"})
	wantEq(t, "Status", m["Status"], any("Fail"))
	wantEq(t, "Message", m["Message"], any("[INTERNAL_ERROR]cancelled"))
	tx, _ := s.TxnByLabel(testDB, "ms")
	wantEq(t, "state", tx.Status, doris.TxnAborted)
}

func TestFault_BlockThenRelease(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h, err := s.Fault(Fault{Op: FaultStream, Block: true})
	if err != nil {
		t.Fatal(err)
	}
	done := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "blk"}, "1\ta\n")
	if err := h.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "while blocked", s.LabelState(testDB, "blk"), doris.TxnPrepare)
	h.Release()
	m := <-done
	if m == nil || m["Status"] != "Success" {
		t.Fatalf("after release: %v", m)
	}
	wantEq(t, "state", s.LabelState(testDB, "blk"), doris.TxnVisible)
}

func TestFault_ObserveCounts(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h, _ := s.Fault(Fault{Op: FaultLoadState, Observe: true, Count: -1})
	for range 2 {
		do(t, "GET", s.FEURL()+"/api/demo/get_load_state?label=x", hdr{}, "")
	}
	wantEq(t, "hits", h.Hits(), 2)
	h.Remove()
	do(t, "GET", s.FEURL()+"/api/demo/get_load_state?label=x", hdr{}, "")
	wantEq(t, "after remove", h.Hits(), 2)
	if _, err := s.Fault(Fault{Op: "nope"}); err == nil {
		t.Fatal("unknown op accepted")
	}
	if _, err := s.Fault(Fault{Op: FaultCommit, Refuse: true, ApplyThenDrop: true}); err == nil {
		t.Fatal("conflicting actions accepted")
	}
}

func TestBEDown_ConnectionRefused_ThenUp(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.BEDown()
	_, err := doErr("PUT", s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "d"}, "1\ta\n")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want connection refused", err)
	}
	// The FE still redirects (its heartbeat has not noticed yet).
	resp, _ := do(t, "PUT", s.FEURL()+"/api/demo/orders/_stream_load", hdr{"Expect": "100-continue"}, "")
	wantEq(t, "HTTP", resp.StatusCode, http.StatusTemporaryRedirect)
	if err := s.BEUp(); err != nil {
		t.Fatal(err)
	}
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "d"})
	wantEq(t, "Status", m["Status"], any("Success"))

	s.FEDown()
	if _, err := doErr("GET", s.FEURL()+"/api/demo/get_load_state?label=d", hdr{}, ""); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("FE down: %v", err)
	}
	if err := s.FEUp(); err != nil {
		t.Fatal(err)
	}
	_, body := do(t, "GET", s.FEURL()+"/api/demo/get_load_state?label=d", hdr{}, "")
	wantEq(t, "state", body, `{"msg":"success","code":0,"data":"VISIBLE","count":0}`)
}

func TestClose_IdempotentAndReleasesBlocked(t *testing.T) {
	t.Parallel()
	s, err := NewServer(SeedDatabases(testDB))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTableSchema(testDB, ordersTable("orders")); err != nil {
		t.Fatal(err)
	}
	h, _ := s.Fault(Fault{Op: FaultBegin, Block: true})
	errc := make(chan error, 1)
	go func() {
		_, err := doErr("PUT", s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "c"}, "1\ta\n")
		errc <- err
	}()
	if err := h.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if err := <-errc; err == nil {
		t.Fatal("blocked load should fail when the server closes")
	}
}

// Close lets a request that is mid-body finish: when Close returns, the load
// has committed and its client got the reply. BEUp fails afterwards.
func TestClose_WaitsForInFlightLoad(t *testing.T) {
	t.Parallel()
	s, err := NewServer(SeedDatabases(testDB))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTableSchema(testDB, ordersTable("orders")); err != nil {
		t.Fatal(err)
	}
	h, _ := s.Fault(Fault{Op: FaultStream, Observe: true})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", s.BEURL()+"/api/demo/orders/_stream_load", pr)
	req.SetBasicAuth("root", "")
	req.Header.Set("label", "inflight")
	status := make(chan any, 1)
	go func() {
		resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil {
			status <- err
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = decodeInto(resp, &m)
		status <- m["Status"]
	}()
	if _, err := pw.Write([]byte("1\ta\n")); err != nil {
		t.Fatal(err)
	}
	if err := h.Wait(context.Background(), 1); err != nil { // the BE is mid-body
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	if _, err := pw.Write([]byte("2\tb\n")); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	<-closed
	wantEq(t, "state when Close returned", s.LabelState(testDB, "inflight"), doris.TxnVisible)
	wantEq(t, "client saw", <-status, any("Success"))
	if err := s.BEUp(); err == nil {
		t.Fatal("BEUp after Close should fail")
	}
}
