package doris

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

func loadReq(label string) LoadRequest {
	return LoadRequest{DB: "demo", Table: "orders", Label: label, Format: "json", TwoPhaseCommit: true, ReadJSONByLine: true}
}

// §1.2 + §10: FE 307 (localhost) → BE (127.0.0.1), Authorization re-added,
// the Location's userinfo not relied upon, headers passed, Expect sent.
func TestStreamLoadSuccessRedirect(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	c := f.client(f.config())
	ratio := 0.25
	req := loadReq("job:demo.orders:0:1")
	req.MaxFilterRatio = &ratio
	req.Columns = "k,v"
	req.HiddenColumns = []string{"__DORIS_DELETE_SIGN__"}
	req.Headers = map[string]string{"Strict_Mode": "true"}
	res, err := c.StreamLoad(context.Background(), req, strings.NewReader("{\"k\":1}\n{\"k\":2}\n"))
	if err != nil {
		t.Fatalf("StreamLoad: %v", err)
	}
	if res.TxnID != 42 || res.Status != StatusSuccess || res.TwoPhaseCommit != "true" || res.LoadBytes != 16 {
		t.Fatalf("result = %+v", res)
	}
	if f.feExpect.Load() != 1 || f.beLoads.Load() != 1 {
		t.Fatalf("FE loads with Expect %d, BE loads %d", f.feExpect.Load(), f.beLoads.Load())
	}
	h := f.lastBEHeader()
	for k, want := range map[string]string{
		"Label": "job:demo.orders:0:1", "Format": "json", "Two_phase_commit": "true",
		"Max_filter_ratio": "0.25", "Columns": "k,v", "Hidden_columns": "__DORIS_DELETE_SIGN__",
		"Read_json_by_line": "true", "Strict_mode": "true",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("BE header %s = %q, want %q", k, got, want)
		}
	}
	if h.Get("Authorization") == "" {
		t.Error("BE got no Authorization")
	}
}

// §2.2: Publish Timeout is success.
func TestStreamLoadPublishTimeout(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
		io.Copy(io.Discard, r.Body)
		return loadJSON(7, r.Header.Get("label"), "Publish Timeout", "transaction commit successfully, BUT data will be visible later", 3)
	}
	c := f.client(f.config())
	res, err := c.StreamLoad(context.Background(), loadReq("l1"), strings.NewReader("a\n"))
	if err != nil || res.Status != StatusPublishTimeout || !res.Succeeded() {
		t.Fatalf("res=%+v err=%v", res, err)
	}
}

// §2.1: the answer echoes two_phase_commit. A 2PC load answered Success
// with TwoPhaseCommit "false" (the header never reached the BE, e.g. a
// proxy dropping underscore headers) was committed, not precommitted.
func TestStreamLoadTwoPhaseCommitIgnored(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
		n, _ := io.Copy(io.Discard, r.Body)
		return strings.Replace(loadJSON(9, r.Header.Get("label"), "Success", "OK", n), `"TwoPhaseCommit": "true"`, `"TwoPhaseCommit": "false"`, 1)
	}
	c := f.client(f.config())
	_, err := c.StreamLoad(context.Background(), loadReq("l2pc"), strings.NewReader("a\n"))
	var le *LoadError
	if !errors.Is(err, ErrTwoPhaseCommitIgnored) || !errors.As(err, &le) || le.Result == nil || le.Result.TxnID != 9 || IsAmbiguous(err) {
		t.Fatalf("err = %v, want non-ambiguous ErrTwoPhaseCommitIgnored with the result", err)
	}
	// Without 2PC requested the same answer is a plain success.
	req := loadReq("l2pc-plain")
	req.TwoPhaseCommit = false
	if res, err := c.StreamLoad(context.Background(), req, strings.NewReader("a\n")); err != nil || res.TwoPhaseCommit != "false" {
		t.Fatalf("non-2PC load: res=%+v err=%v", res, err)
	}
}

// §2.3/§2.5: Label Already Exists, answered before the body is read: the
// (infinite) body is not consumed to the end; ExistingTxnID parsed.
func TestStreamLoadLabelAlreadyExists(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
		return `{
    "TxnId": -1,
    "Label": "l1",
    "Comment": "",
    "TwoPhaseCommit": "true",
    "Status": "Label Already Exists",
    "ExistingJobStatus": "PRECOMMITTED",
    "Message": "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [l1] has already been used, relate to txn [602531767123968]",
    "NumberTotalRows": 0, "NumberLoadedRows": 0, "NumberFilteredRows": 0, "NumberUnselectedRows": 0,
    "LoadBytes": 0, "LoadTimeMs": 0, "BeginTxnTimeMs": 0, "StreamLoadPutTimeMs": 0,
    "ReadDataTimeMs": 0, "WriteDataTimeMs": 0, "ReceiveDataTimeMs": 0, "CommitAndPublishTimeMs": 0
}
`
	}
	c := f.client(f.config())
	_, err := c.StreamLoad(context.Background(), loadReq("l1"), &infiniteReader{})
	if !errors.Is(err, ErrLabelAlreadyExists) || IsAmbiguous(err) {
		t.Fatalf("err = %v, want ErrLabelAlreadyExists, not ambiguous", err)
	}
	var le *LoadError
	if !errors.As(err, &le) || le.Result == nil {
		t.Fatalf("err %T is not a *LoadError with Result", err)
	}
	if le.Result.ExistingJobStatus != JobPrecommitted || le.Result.ExistingTxnID != 602531767123968 || le.TxnID != -1 || le.Label != "l1" {
		t.Fatalf("LoadError = %+v, Result = %+v", le, le.Result)
	}
}

// §8: filter ratio exceeded → Fail, ErrDataQuality, known outcome.
func TestStreamLoadDataQuality(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
		io.Copy(io.Discard, r.Body)
		return `{"TxnId": 2014, "Label": "l2", "Comment": "", "TwoPhaseCommit": "true",
 "Status": "Fail", "Message": "[DATA_QUALITY_ERROR]too many filtered rows",
 "NumberTotalRows": 1, "NumberLoadedRows": 0, "NumberFilteredRows": 1, "NumberUnselectedRows": 0,
 "LoadBytes": 1669, "LoadTimeMs": 58, "BeginTxnTimeMs": 0, "StreamLoadPutTimeMs": 10,
 "ReadDataTimeMs": 0, "WriteDataTimeMs": 47, "CommitAndPublishTimeMs": 0,
 "ErrorURL": "http://127.0.0.1:8040/api/_load_error_log?file=__shard_4/error_log_insert_stmt_x"}`
	}
	c := f.client(f.config())
	_, err := c.StreamLoad(context.Background(), loadReq("l2"), strings.NewReader("bad\n"))
	var le *LoadError
	if !errors.Is(err, ErrDataQuality) || IsAmbiguous(err) || !errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	if le.TxnID != 2014 || le.Status != StatusFail || le.Result.NumberFilteredRows != 1 || le.Result.ErrorURL == "" {
		t.Fatalf("LoadError = %+v", le)
	}
}

// §1.2: FE Unauthorized body (HTTP 200) → ErrUnauthorized; the password is
// in no error string.
func TestStreamLoadFEUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	cfg := f.config()
	cfg.Password = "wrong-pass-xyz"
	c := f.client(cfg)
	_, err := c.StreamLoad(context.Background(), loadReq("l3"), strings.NewReader("a\n"))
	if !errors.Is(err, ErrUnauthorized) || IsAmbiguous(err) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "wrong-pass-xyz") {
		t.Fatalf("password leaked: %v", err)
	}
	if f.beLoads.Load() != 0 {
		t.Fatal("BE was called")
	}
}

// §1.3: BE Fail for bad auth (direct BE) → ErrUnauthorized.
func TestStreamLoadBEUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	cfg := f.config()
	cfg.BE = []string{f.beURL}
	cfg.Password = "nope"
	c := f.client(cfg)
	_, err := c.StreamLoad(context.Background(), loadReq("l3"), strings.NewReader("a\n"))
	if !errors.Is(err, ErrUnauthorized) || IsAmbiguous(err) {
		t.Fatalf("err = %v", err)
	}
}

// §1.2: the FE requires Expect; its refusal shape maps to a LoadError.
func TestStreamLoadFERefusal(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.feLoadAnswer = `{"status":"FAILED","msg":"There is no 100-continue header"}`
	c := f.client(f.config())
	_, err := c.StreamLoad(context.Background(), loadReq("l4"), strings.NewReader("a\n"))
	var le *LoadError
	if !errors.As(err, &le) || le.Status != "FAILED" || le.Message != "There is no 100-continue header" || IsAmbiguous(err) {
		t.Fatalf("err = %v", err)
	}
	if f.feExpect.Load() != 1 {
		t.Fatal("client did not send Expect to the FE")
	}
}

// Unknown db (§2.4) → ErrNotFound.
func TestStreamLoadUnknownDB(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
		return loadJSON(-1, "l5", "Fail", "[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=nope", 0)
	}
	c := f.client(f.config())
	_, err := c.StreamLoad(context.Background(), loadReq("l5"), strings.NewReader("a\n"))
	if !errors.Is(err, ErrNotFound) || IsAmbiguous(err) {
		t.Fatalf("err = %v", err)
	}
}

// The BE reads the request and drops the connection: outcome unknown.
func TestStreamLoadDroppedResponseIsAmbiguous(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
		io.Copy(io.Discard, r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return ""
	}
	c := f.client(f.config())
	_, err := c.StreamLoad(context.Background(), loadReq("l6"), strings.NewReader("a\n"))
	if err == nil || !IsAmbiguous(err) {
		t.Fatalf("err = %v, want ambiguous", err)
	}
}

// A BE answer that is not JSON: unknown outcome.
func TestStreamLoadGarbageIsAmbiguous(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
		io.Copy(io.Discard, r.Body)
		return "<html>oops</html>"
	}
	c := f.client(f.config())
	_, err := c.StreamLoad(context.Background(), loadReq("l6"), strings.NewReader("a\n"))
	if !IsAmbiguous(err) {
		t.Fatalf("err = %v, want ambiguous", err)
	}
}

// Connection refused everywhere: nothing was sent, not ambiguous.
func TestStreamLoadRefusedNotAmbiguous(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	c, err := NewClient(Config{FE: []string{"http://" + addr}, User: testUser, Password: testPassword})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := &genReader{left: 10}
	_, err = c.StreamLoad(context.Background(), loadReq("l7"), body)
	if err == nil || IsAmbiguous(err) {
		t.Fatalf("err = %v, want non-ambiguous", err)
	}
	if strings.Contains(err.Error(), testPassword) {
		t.Fatalf("password leaked: %v", err)
	}
	if body.read.Load() != 0 {
		t.Fatal("body was read")
	}

	// Same with a direct BE that refuses.
	c2, _ := NewClient(Config{FE: []string{"http://" + addr}, BE: []string{"http://" + addr}, User: testUser})
	defer c2.Close()
	if _, err = c2.StreamLoad(context.Background(), loadReq("l7"), body); err == nil || IsAmbiguous(err) {
		t.Fatalf("direct BE err = %v, want non-ambiguous", err)
	}
}

// FE failover: the first FE refuses connections, the second redirects.
func TestStreamLoadFEFailover(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	cfg := f.config()
	cfg.FE = []string{"http://" + closedAddr(t), f.feURL}
	c := f.client(cfg)
	for i := range 2 { // both round-robin starting points
		res, err := c.StreamLoad(context.Background(), loadReq("lf"), strings.NewReader("abc\n"))
		if err != nil || res.TxnID != 42 {
			t.Fatalf("load %d: res=%+v err=%v", i, res, err)
		}
	}
}

// Config.BE: straight to a BE, no FE involved.
func TestStreamLoadDirectBE(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	cfg := f.config()
	cfg.BE = []string{"http://" + closedAddr(t), f.beURL}
	c := f.client(cfg)
	for range 2 {
		if _, err := c.StreamLoad(context.Background(), loadReq("ld"), strings.NewReader("abc\n")); err != nil {
			t.Fatal(err)
		}
	}
	if f.feLoads.Load() != 0 || f.beLoads.Load() != 2 {
		t.Fatalf("FE loads %d, BE loads %d", f.feLoads.Load(), f.beLoads.Load())
	}
}

// A 64 MiB generated body is streamed: the FE step consumes none of it (the
// BE request starts with 0 bytes read, even when the FE asks for the body
// with 100 Continue), the BE gets all of it, and the client allocates far
// less than the body. Not parallel: it measures allocations.
func TestStreamLoadStreamsBody(t *testing.T) {
	const size = 64 << 20
	for _, tc := range []struct {
		name        string
		length      int64
		feReadsBody bool
	}{{"chunked", 0, false}, {"content-length", size, false}, {"fe-sends-100-continue", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeDoris(t)
			f.feReadsBody = tc.feReadsBody
			body := &genReader{left: size}
			var readAtBE int64 = -1
			f.beLoad = func(w http.ResponseWriter, r *http.Request) string {
				readAtBE = body.read.Load() // before the BE reads (and 100-continues) anything
				n, _ := io.Copy(io.Discard, r.Body)
				f.beBodyBytes.Add(n)
				return loadJSON(9, "big", "Success", "OK", n)
			}
			c := f.client(f.config())
			req := loadReq("big")
			req.ContentLength = tc.length
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := c.StreamLoad(context.Background(), req, body)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if readAtBE != 0 {
				t.Errorf("%d body bytes consumed before the BE request", readAtBE)
			}
			if n := f.feBodyBytes.Load(); n != 0 {
				t.Errorf("FE received %d body bytes", n)
			}
			if got := f.beBodyBytes.Load(); got != size || res.LoadBytes != size || body.read.Load() != size {
				t.Errorf("BE got %d bytes, LoadBytes %d, generated %d, want %d", got, res.LoadBytes, body.read.Load(), size)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
				t.Errorf("allocated %d bytes for a %d-byte body", alloc, size)
			}
		})
	}
}

// The FE step still reads no body when ExpectContinueTimeout expires before
// the FE answers (the gate body blocks until the 307 arrives): every
// generated byte reaches the BE.
func TestStreamLoadExpectTimeoutStillWithholdsBody(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	f.feReadsBody = true
	const size = 1 << 20
	body := &genReader{left: size}
	cfg := f.config()
	cfg.ExpectContinueTimeout = 1 // 1ns: Go starts "sending" bodies at once
	c := f.client(cfg)
	res, err := c.StreamLoad(context.Background(), loadReq("x"), body)
	if err != nil {
		t.Fatal(err)
	}
	if f.feBodyBytes.Load() != 0 || res.LoadBytes != size || body.read.Load() != size {
		t.Fatalf("FE got %d, BE got %d, generated %d", f.feBodyBytes.Load(), res.LoadBytes, body.read.Load())
	}
}

func TestStreamLoadValidation(t *testing.T) {
	t.Parallel()
	f := newFakeDoris(t)
	c := f.client(f.config())
	for _, req := range []LoadRequest{
		{Table: "t"},
		{DB: "d", Table: "t", Headers: map[string]string{"Authorization": "x"}},
		{DB: "d", Table: "t", Timeout: 1},
	} {
		if _, err := c.StreamLoad(context.Background(), req, nil); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
	if f.feLoads.Load() != 0 {
		t.Fatal("invalid request reached the FE")
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
