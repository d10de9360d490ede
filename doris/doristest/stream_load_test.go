package doristest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
)

func TestStreamLoad_Success_ResponseShape_2_1(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "orders", "1\ta\n2\tb\n", hdr{"label": "l1", "comment": "hi"})
	wantEq(t, "Status", m["Status"], any("Success"))
	wantEq(t, "Message", m["Message"], any("OK"))
	wantEq(t, "TwoPhaseCommit", m["TwoPhaseCommit"], any("false"))
	wantEq(t, "Comment", m["Comment"], any("hi"))
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 2)
	if num(t, m, "TxnId") < 1000 {
		t.Fatalf("TxnId %d, want ≥ 1000", num(t, m, "TxnId"))
	}
	// Exact field order, PrettyWriter layout and trailing newline (§2.1).
	keys := regexp.MustCompile(`(?m)^    "(\w+)": `).FindAllStringSubmatch(raw, -1)
	var got []string
	for _, k := range keys {
		got = append(got, k[1])
	}
	want := "TxnId Label Comment TwoPhaseCommit Status Message NumberTotalRows NumberLoadedRows NumberFilteredRows " +
		"NumberUnselectedRows LoadBytes LoadTimeMs BeginTxnTimeMs StreamLoadPutTimeMs ReadDataTimeMs WriteDataTimeMs " +
		"ReceiveDataTimeMs CommitAndPublishTimeMs"
	wantEq(t, "field order", strings.Join(got, " "), want)
	if !strings.HasPrefix(raw, "{\n    \"TxnId\": ") || !strings.HasSuffix(raw, "\n}\n") {
		t.Fatalf("layout: %q", raw)
	}
	if !strings.Contains(raw, `"TwoPhaseCommit": "false"`) {
		t.Fatalf("TwoPhaseCommit must be a string: %s", raw)
	}
	rows, err := s.Rows(testDB, "orders")
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows = %v, %v; want 2 rows", rows, err)
	}
	wantEq(t, "LabelState", s.LabelState(testDB, "l1"), doris.TxnVisible)
}

func TestStreamLoad_EmptyBody_11_7(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// Flink's recovery probe: empty body, 2PC (§11.7).
	m, raw := load(t, s, "orders", "", hdr{"label": "probe", "two_phase_commit": "true"})
	wantEq(t, "Status", m["Status"], any("Success"))
	wantEq(t, "TwoPhaseCommit", m["TwoPhaseCommit"], any("true"))
	wantEq(t, "CommitAndPublishTimeMs", num(t, m, "CommitAndPublishTimeMs"), 0)
	wantEq(t, "LoadBytes", num(t, m, "LoadBytes"), 0)
	if !strings.Contains(raw, `"TwoPhaseCommit": "true"`) {
		t.Fatalf("TwoPhaseCommit must be the string \"true\": %s", raw)
	}
	id := num(t, m, "TxnId")
	wantEq(t, "state", s.LabelState(testDB, "probe"), doris.TxnPrecommitted)
	st, _, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "abort"})
	wantEq(t, "abort", st, "Success")
}

func TestStreamLoad_EmptyLabelGetsUUID_1_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, _ := load(t, s, "orders", "1\ta\n", hdr{})
	label, _ := m["Label"].(string)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(label) {
		t.Fatalf("Label = %q, want a UUID", label)
	}
	wantEq(t, "state", s.LabelState(testDB, label), doris.TxnVisible)
}

func TestStreamLoad_TwoPhaseCommitOnlyExactTrue_1_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "x", "two_phase_commit": "True"})
	wantEq(t, "TwoPhaseCommit", m["TwoPhaseCommit"], any("false"))
	wantEq(t, "state", s.LabelState(testDB, "x"), doris.TxnVisible)
}

func TestStreamLoad_AuthErrors_1_3(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"-auth": "", "label": "a"})
	wantEq(t, "Status", m["Status"], any("Fail"))
	wantEq(t, "Message", m["Message"], any("[NOT_AUTHORIZED]no valid Basic authorization"))
	wantEq(t, "TxnId", num(t, m, "TxnId"), -1)
	wantEq(t, "Label", m["Label"], any("a"))

	req, _ := http.NewRequest(http.MethodPut, s.BEURL()+"/api/demo/orders/_stream_load", strings.NewReader("1\ta\n"))
	req.SetBasicAuth("root", "wrong")
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantEq(t, "HTTP", resp.StatusCode, 200) // a wrong password is a Fail JSON, not 401 (§1.3)
	b, _ := io.ReadAll(resp.Body)
	m = decode(t, string(b))
	// ERR_ACCESS_DENIED_ERROR with user@host as one argument (§1.3, Auth.checkPlainPassword).
	wantEq(t, "Message", m["Message"], any("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied for user 'root@127.0.0.1' (using password: YES)"))
	wantEq(t, "state", s.LabelState(testDB, "a"), doris.TxnUnknown)
}

func TestStreamLoad_UnknownDBAndTable_2_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, raw := do(t, http.MethodPut, s.BEURL()+"/api/nodb/orders/_stream_load", hdr{"label": "a"}, "1\ta\n")
	m := decode(t, raw)
	wantEq(t, "Message", m["Message"], any("[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=nodb"))
	wantEq(t, "TxnId", num(t, m, "TxnId"), -1)
	m, _ = load(t, s, "nope", "1\ta\n", hdr{"label": "a"})
	wantEq(t, "Message", m["Message"], any("[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=nope"))
}

func TestStreamLoad_BadLabel_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "bad label!"})
	wantEq(t, "Status", m["Status"], any("Fail"))
	wantEq(t, "Message", m["Message"],
		any("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Label format error. regex: ^[-_A-Za-z0-9:]{1,128}$, label: bad label!"))
	m, _ = load(t, s, "orders", "1\ta\n", hdr{"label": strings.Repeat("a", 129)})
	wantEq(t, "Status", m["Status"], any("Fail"))
	m, _ = load(t, s, "orders", "1\ta\n", hdr{"label": "job:demo_orders:0:" + strings.Repeat("9", 110)})
	wantEq(t, "Status", m["Status"], any("Success"))
}

func TestStreamLoad_LabelAlreadyExists_ExistingJobStatus_2_3(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// FINISHED: the label's txn is VISIBLE.
	first, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "done"})
	m, raw := load(t, s, "orders", "1\ta\n", hdr{"label": "done", "two_phase_commit": "true"})
	wantEq(t, "Status", m["Status"], any("Label Already Exists"))
	wantEq(t, "ExistingJobStatus", m["ExistingJobStatus"], any("FINISHED"))
	wantEq(t, "TxnId", num(t, m, "TxnId"), -1)
	wantEq(t, "TwoPhaseCommit", m["TwoPhaseCommit"], any("true"))
	wantEq(t, "Message", m["Message"], any("[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [done] has already been used, relate to txn ["+itoa(num(t, first, "TxnId"))+"]"))
	if !strings.Contains(raw, "\"Status\": \"Label Already Exists\",\n    \"ExistingJobStatus\": \"FINISHED\",\n    \"Message\"") {
		t.Fatalf("ExistingJobStatus must follow Status: %s", raw)
	}
	// PRECOMMITTED.
	precommit(t, s, "pre", "1\ta\n")
	m, _ = load(t, s, "orders", "1\ta\n", hdr{"label": "pre"})
	wantEq(t, "ExistingJobStatus", m["ExistingJobStatus"], any("PRECOMMITTED"))
	// RUNNING: a PREPARE txn (the BE began it, then the connection dropped).
	h, err := s.Fault(Fault{Op: FaultBegin, Label: "run", ApplyThenDrop: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := doErr(http.MethodPut, s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "run"}, "1\ta\n"); err == nil {
		t.Fatal("want a transport error from ApplyThenDrop")
	}
	wantEq(t, "hits", h.Hits(), 1)
	wantEq(t, "state", s.LabelState(testDB, "run"), doris.TxnPrepare)
	m, _ = load(t, s, "orders", "1\ta\n", hdr{"label": "run"})
	wantEq(t, "ExistingJobStatus", m["ExistingJobStatus"], any("RUNNING"))
	// Other responses carry no ExistingJobStatus.
	if _, ok := first["ExistingJobStatus"]; ok {
		t.Fatal("ExistingJobStatus on a success")
	}
}

func TestStreamLoad_LabelReusableAfterAbort_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "reuse", "1\ta\n")
	st, _, _ := txn2pc(t, s, hdr{"label": "reuse", "txn_operation": "abort"})
	wantEq(t, "abort", st, "Success")
	id2 := precommit(t, s, "reuse", "2\tb\n")
	if id2 <= id {
		t.Fatalf("new txn id %d not > %d", id2, id)
	}
	st, _, _ = txn2pc(t, s, hdr{"label": "reuse", "txn_operation": "commit"})
	wantEq(t, "commit", st, "Success")
	rows, _ := s.Rows(testDB, "orders")
	if len(rows) != 1 || rows[0][0] != int64(2) {
		t.Fatalf("rows = %v, want only id 2", rows)
	}
	tx, err := s.TxnByLabel(testDB, "reuse")
	if err != nil || tx.ID != id2 || tx.Status != doris.TxnVisible {
		t.Fatalf("TxnByLabel = %+v, %v", tx, err)
	}
	old, err := s.TxnByID(testDB, id)
	if err != nil || old.Status != doris.TxnAborted || old.Reason != "User Abort" {
		t.Fatalf("old txn = %+v, %v", old, err)
	}
}

func TestStreamLoad_FilterRatio_8(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "orders", "1\ta\n2\tb\textra\n", hdr{"label": "bad"})
	wantEq(t, "Status", m["Status"], any("Fail"))
	wantEq(t, "Message", m["Message"], any("[DATA_QUALITY_ERROR]too many filtered rows"))
	wantEq(t, "NumberTotalRows", num(t, m, "NumberTotalRows"), 2)
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 0)
	wantEq(t, "NumberFilteredRows", num(t, m, "NumberFilteredRows"), 1)
	if num(t, m, "TxnId") < 0 {
		t.Fatalf("TxnId = %d, want the begun txn", num(t, m, "TxnId"))
	}
	u, _ := m["ErrorURL"].(string)
	if !strings.HasPrefix(u, s.BEURL()+"/api/_load_error_log?file=__shard_") || !strings.HasSuffix(raw, "\"ErrorURL\": \""+u+"\"\n}\n") {
		t.Fatalf("ErrorURL %q in %s", u, raw)
	}
	resp, body := do(t, http.MethodGet, u, hdr{}, "")
	if resp.StatusCode != 200 || !strings.Contains(body, "extra") {
		t.Fatalf("error log: %d %q", resp.StatusCode, body)
	}
	tx, _ := s.TxnByLabel(testDB, "bad")
	wantEq(t, "state", tx.Status, doris.TxnAborted)
	wantEq(t, "reason", tx.Reason, "[DATA_QUALITY_ERROR]too many filtered rows")

	m, _ = load(t, s, "orders", "1\ta\n2\tb\textra\n", hdr{"label": "ok", "max_filter_ratio": "0.5"})
	wantEq(t, "Status", m["Status"], any("Success"))
	wantEq(t, "NumberLoadedRows", num(t, m, "NumberLoadedRows"), 1)
	if _, ok := m["ErrorURL"].(string); !ok {
		t.Fatal("a load with filtered rows within the ratio still has an ErrorURL")
	}
}

func TestStreamLoad_PublishHeld_2_2(t *testing.T) {
	t.Parallel()
	s := newServer(t, HoldPublish())
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "p"})
	wantEq(t, "Status", m["Status"], any("Publish Timeout"))
	wantEq(t, "state", s.LabelState(testDB, "p"), doris.TxnCommitted)
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows while held", len(rows), 0)
	s.SetHoldPublish(false)
	wantEq(t, "state", s.LabelState(testDB, "p"), doris.TxnVisible)
	rows, _ = s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 1)
}

func TestStreamLoad_BadFormatAndTimeout_1_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "f", "format": "xml"})
	wantEq(t, "Message", m["Message"], any("[DATA_FILE_TYPE_ERROR]unknown data format, format=xml"))
	m, _ = load(t, s, "orders", "1\ta\n", hdr{"label": "f", "timeout": "0"})
	wantEq(t, "Message", m["Message"], any("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Invalid timeout: 0. Timeout should between 1 and 259200 seconds"))
	wantEq(t, "state", s.LabelState(testDB, "f"), doris.TxnUnknown)
}

// A PUT with neither Content-Length nor chunked encoding is refused before
// begin_txn (docs/doris-facts.md §1.5: "body size → chunked/length check"). Go's
// client always sends one of them, so this speaks HTTP/1.1 by hand.
func TestStreamLoad_NoContentLengthNorChunked_1_5(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.BEURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "PUT /api/demo/orders/_stream_load HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic cm9vdDo=\r\nlabel: nolen\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, string(raw))
	wantEq(t, "HTTP status", resp.StatusCode, http.StatusOK)
	wantEq(t, "Message", m["Message"], any("[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or transfer-encoding=chunked"))
	wantEq(t, "TxnId", num(t, m, "TxnId"), -1)
	wantEq(t, "state", s.LabelState(testDB, "nolen"), doris.TxnUnknown)
}
