package doris

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// fe2pcError renders a BE 2PC refusal (§3.4): Status::to_json of an FE
// UserException.
func fe2pcError(msg string) string {
	return "{\n    \"status\": \"ANALYSIS_ERROR\",\n    \"msg\": \"TStatus: errCode = 2, detailMessage = " + msg + "\"\n}"
}

// Every §3.3 message maps to its sentinel, with txn id and abort reason.
func TestTwoPCMessagesToSentinels(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, op, msg string
		want          error
		reason        string
	}{
		{"commit aborted", "commit", "transaction [5] is already aborted. abort reason: timeout by txn manager", ErrTxnAlreadyAborted, "timeout by txn manager"},
		{"abort aborted", "abort", "transaction [5] is already aborted, abort reason: User Abort", ErrTxnAlreadyAborted, "User Abort"},
		{"commit visible", "commit", "transaction [5] is already visible, not pre-committed.", ErrTxnAlreadyCommitted, ""},
		{"commit committed", "commit", "transaction [5] is already committed, not pre-committed.", ErrTxnAlreadyCommitted, ""},
		{"abort committed", "abort", "transaction [5] is already COMMITTED, could not abort.", ErrTxnAlreadyCommitted, ""},
		{"abort visible", "abort", "transaction [5] is already VISIBLE, could not abort.", ErrTxnAlreadyCommitted, ""},
		{"prepare", "commit", "transaction [5] is prepare, not pre-committed.", ErrTxnNotPrecommitted, ""},
		{"id not found", "commit", "transaction [5] not found", ErrTxnNotFound, ""},
		{"unknown db", "commit", "unknown database, database=nope", ErrNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeDoris(t)
			f.be2PC = func(w http.ResponseWriter, r *http.Request) string { return fe2pcError(tc.msg) }
			c := f.client(f.config())
			call := c.CommitTxn
			if tc.op == "abort" {
				call = c.AbortTxn
			}
			err := call(context.Background(), "demo", 5)
			var te *TxnError
			if !errors.Is(err, tc.want) || !errors.As(err, &te) || IsAmbiguous(err) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if te.Op != tc.op || te.TxnID != 5 || te.Code != "ANALYSIS_ERROR" || te.Reason != tc.reason || te.DB != "demo" {
				t.Fatalf("TxnError = %+v", te)
			}
			if got := f.lastBEHeader().Get("txn_operation"); got != tc.op {
				t.Fatalf("txn_operation = %q", got)
			}
		})
	}
}

// By label (§3.2): label header sent, label-specific messages mapped.
func TestTwoPCByLabel(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	var answer atomic.Value
	answer.Store(`{"status": "Success", "msg": "label [L1] commit successfully."}`)
	f.be2PC = func(w http.ResponseWriter, r *http.Request) string { return answer.Load().(string) }
	c := f.client(f.config())
	if err := c.CommitLabel(context.Background(), "demo", "L1"); err != nil {
		t.Fatal(err)
	}
	h := f.lastBEHeader()
	if h.Get("label") != "L1" || h.Get("txn_id") != "" || h.Get("txn_operation") != "commit" || h.Get("Authorization") == "" {
		t.Fatalf("BE headers %v", h)
	}
	for msg, want := range map[string]error{
		"running transaction not found, label=L1": ErrRunningTxnNotFound,
		"transaction not found, label=L1":         ErrTxnNotFound,
	} {
		answer.Store(fe2pcError(msg))
		err := c.AbortLabel(context.Background(), "demo", "L1")
		var te *TxnError
		if !errors.Is(err, want) || !errors.As(err, &te) || te.Label != "L1" || te.Op != "abort" {
			t.Fatalf("%q: err = %v", msg, err)
		}
	}
}

// Success by txn id: Authorization re-added after the cross-host 307.
func TestCommitTxnSuccess(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	c := f.client(f.config())
	if err := c.CommitTxn(context.Background(), "demo", 18036); err != nil {
		t.Fatal(err)
	}
	if h := f.lastBEHeader(); h.Get("txn_id") != "18036" {
		t.Fatalf("BE headers %v", h)
	}
}

// busyOnce answers the first 2PC call (counted in calls) 503 and later
// ones with then.
func busyOnce(calls *atomic.Int64, then func(http.ResponseWriter) string) func(http.ResponseWriter, *http.Request) string {
	return func(w http.ResponseWriter, _ *http.Request) string {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return "busy"
		}
		return then(w)
	}
}

// A 503 is retried; the retry's answer counts.
func TestCommitRetries5xx(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	var calls atomic.Int64
	f.be2PC = busyOnce(&calls, func(http.ResponseWriter) string {
		return fe2pcError("transaction [7] is already committed, not pre-committed.")
	})
	c := f.client(f.config())
	err := c.CommitTxn(context.Background(), "demo", 7)
	if !errors.Is(err, ErrTxnAlreadyCommitted) || calls.Load() != 2 || IsAmbiguous(err) {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
}

// A 503 may come from a proxy that forwarded the commit (§8: Doris itself
// answers 200): when the retry then gets a bare non-200 status, which says
// nothing about the txn, the outcome is unknown.
func TestCommitBare4xxAfter5xxIsAmbiguous(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	var calls atomic.Int64
	f.be2PC = busyOnce(&calls, func(w http.ResponseWriter) string {
		w.WriteHeader(http.StatusNotFound)
		return "gone"
	})
	c := f.client(f.config())
	err := c.CommitTxn(context.Background(), "demo", 7)
	if !IsAmbiguous(err) || calls.Load() != 2 {
		t.Fatalf("err = %v after %d calls, want ambiguous after 2", err, calls.Load())
	}
	// The same 404 on a first attempt is a known refusal.
	calls.Store(1)
	err = c.CommitTxn(context.Background(), "demo", 7)
	if IsAmbiguous(err) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("first-attempt 404: err = %v, want non-ambiguous ErrNotFound", err)
	}
}

// The BE drops the connection on every attempt: commit outcome unknown.
func TestCommitDroppedIsAmbiguous(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.be2PC = func(w http.ResponseWriter, r *http.Request) string {
		io.Copy(io.Discard, r.Body)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return ""
	}
	c := f.client(f.config())
	err := c.CommitTxn(context.Background(), "demo", 7)
	if !IsAmbiguous(err) {
		t.Fatalf("err = %v, want ambiguous", err)
	}
	if strings.Contains(err.Error(), testPassword) {
		t.Fatalf("password leaked: %v", err)
	}
}

// Refused connections only: nothing was sent, not ambiguous.
func TestCommitRefusedNotAmbiguous(t *testing.T) {
	t.Parallel()
	c, err := NewClient(Config{FE: []string{"http://" + closedAddr(t)}, User: testUser, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.AbortTxn(context.Background(), "demo", 7); err == nil || IsAmbiguous(err) {
		t.Fatalf("err = %v, want non-ambiguous", err)
	}
}

// FE failover for small calls: retries rotate to the next FE.
func TestCommitFEFailover(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	cfg := f.config()
	cfg.FE = []string{"http://" + closedAddr(t), f.feURL}
	c := f.client(cfg)
	for range 2 {
		if err := c.CommitTxn(context.Background(), "demo", 1); err != nil {
			t.Fatal(err)
		}
	}
}

// FE Unauthorized body on 2PC → ErrUnauthorized.
func TestTwoPCUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	cfg := f.config()
	cfg.Password = "bad-pw-123"
	c := f.client(cfg)
	err := c.AbortTxn(context.Background(), "demo", 1)
	if !errors.Is(err, ErrUnauthorized) || strings.Contains(err.Error(), "bad-pw-123") {
		t.Fatalf("err = %v", err)
	}
}

// §6.1 get_load_state shapes.
func TestLoadState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want TxnStatus
		err  error
	}{
		{`{"msg":"success","code":0,"data":"VISIBLE","count":0}`, TxnVisible, nil},
		{`{"msg":"success","code":0,"data":"PRECOMMITTED","count":0}`, TxnPrecommitted, nil},
		{`{"msg":"success","code":0,"data":"UNKNOWN","count":0}`, TxnUnknown, nil},
		{`{"msg":"Error","code":1,"data":"unknown database, database=nope","count":0}`, "", ErrNotFound},
		{`{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`, "", ErrUnauthorized},
	} {
		f := newFakeDoris(t)
		f.loadState = tc.body
		c := f.client(f.config())
		got, err := c.LoadState(context.Background(), "demo", "L1")
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: got %q, %v", tc.body, got, err)
		}
	}
}
