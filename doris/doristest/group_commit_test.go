package doristest

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

var groupCommitLabelRE = regexp.MustCompile(`^group_commit_[0-9a-f]+_[0-9a-f]+$`)

func fieldOrder(raw string) string {
	var got []string
	for _, k := range regexp.MustCompile(`(?m)^    "(\w+)": `).FindAllStringSubmatch(raw, -1) {
		got = append(got, k[1])
	}
	return strings.Join(got, " ")
}

// Reply shape of a group-commit load (stream_load_context.cpp to_json):
// "GroupCommit": true instead of TwoPhaseCommit, no BeginTxnTimeMs or
// CommitAndPublishTimeMs, the internal load's group_commit_ label and txn id.
// sync_mode rows are visible at the reply.
func TestStreamLoad_GroupCommitSync_ReplyShape_StreamLoadContext(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "orders", "1\ta\n2\tb\n", hdr{"group_commit": "SYNC_MODE"})
	wantEq(t, "Status "+raw, m["Status"], any("Success"))
	wantEq(t, "GroupCommit", m["GroupCommit"], any(true))
	if !strings.Contains(raw, `"GroupCommit": true,`) {
		t.Fatalf("GroupCommit must be a JSON bool: %s", raw)
	}
	wantEq(t, "field order", fieldOrder(raw), "TxnId Label Comment GroupCommit Status Message NumberTotalRows "+
		"NumberLoadedRows NumberFilteredRows NumberUnselectedRows LoadBytes LoadTimeMs StreamLoadPutTimeMs "+
		"ReadDataTimeMs WriteDataTimeMs ReceiveDataTimeMs")
	label, _ := m["Label"].(string)
	if !groupCommitLabelRE.MatchString(label) {
		t.Fatalf("Label %q, want group_commit_<hi>_<lo>", label)
	}
	tx, err := s.TxnByLabel(testDB, label)
	if err != nil || tx.ID != num(t, m, "TxnId") || tx.Status != doris.TxnVisible {
		t.Fatalf("internal txn %+v, %v; want VISIBLE with the reply's TxnId", tx, err)
	}
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 2)
}

// async_mode rows become visible when the internal load commits,
// group_commit_interval_ms (default 10 s) after it opened; loads within the
// interval share its label and txn (DOC-GC, group_commit_mgr).
func TestStreamLoad_GroupCommitAsync_VisibleAfterInterval_GroupCommitManual(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk))
	m1, raw := load(t, s, "orders", "1\ta\n", hdr{"group_commit": "async_mode"})
	wantEq(t, "Status "+raw, m1["Status"], any("Success"))
	clk.Advance(4 * time.Second)
	m2, _ := load(t, s, "orders", "2\tb\n", hdr{"group_commit": "async_mode"})
	wantEq(t, "shared label", m2["Label"], m1["Label"])
	wantEq(t, "shared txn", num(t, m2, "TxnId"), num(t, m1, "TxnId"))
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows before the interval", len(rows), 0)
	wantEq(t, "state before", s.LabelState(testDB, m1["Label"].(string)), doris.TxnPrepare)
	clk.Advance(6 * time.Second) // 10 s after the group opened
	rows, _ = s.Rows(testDB, "orders")
	wantEq(t, "rows after the interval", len(rows), 2)
	wantEq(t, "state after", s.LabelState(testDB, m1["Label"].(string)), doris.TxnVisible)
	m3, _ := load(t, s, "orders", "3\tc\n", hdr{"group_commit": "async_mode"})
	if m3["Label"] == m1["Label"] {
		t.Fatal("a load after the commit must open a new internal load")
	}
}

// The table property group_commit_interval_ms overrides the 10 s default.
func TestStreamLoad_GroupCommitAsync_IntervalProperty_GroupCommitManual(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk))
	tb := ordersTable("fast")
	tb.Properties["group_commit_interval_ms"] = "500"
	if err := s.CreateTableSchema(testDB, tb); err != nil {
		t.Fatal(err)
	}
	load(t, s, "fast", "1\ta\n", hdr{"group_commit": "async_mode"})
	clk.Advance(499 * time.Millisecond)
	rows, _ := s.Rows(testDB, "fast")
	wantEq(t, "rows at 499 ms", len(rows), 0)
	clk.Advance(time.Millisecond)
	rows, _ = s.Rows(testDB, "fast")
	wantEq(t, "rows at 500 ms", len(rows), 1)
}

// Header validation and the label rule (stream_load.cpp _handle_group_commit,
// _can_group_commit).
func TestStreamLoad_GroupCommitHeaderRules_StreamLoadCpp(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "orders", "1\ta\n", hdr{"group_commit": "true", "label": "x1"})
	wantEq(t, "bad value "+raw, m["Message"], any("[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]"))
	wantEq(t, "TxnId", num(t, m, "TxnId"), -1)
	// Checked before Basic auth.
	m, _ = load(t, s, "orders", "1\ta\n", hdr{"group_commit": "bogus", "-auth": ""})
	wantEq(t, "before auth", m["Message"], any("[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]"))

	m, raw = load(t, s, "orders", "1\ta\n", hdr{"group_commit": "async_mode", "label": "x2"})
	wantEq(t, "label "+raw, m["Message"], any("[INVALID_ARGUMENT]label and group_commit can't be set at the same time"))
	wantEq(t, "label TxnId", num(t, m, "TxnId"), -1)
	wantEq(t, "label Label", m["Label"], any("x2"))
	if _, ok := m["TwoPhaseCommit"]; !ok {
		t.Fatalf("a refused group commit is not a group-commit reply: %s", raw)
	}

	// off_mode is a normal load that keeps its label.
	m, raw = load(t, s, "orders", "1\ta\n", hdr{"group_commit": "OFF_MODE", "label": "x3"})
	wantEq(t, "off_mode "+raw, m["Status"], any("Success"))
	wantEq(t, "off_mode Label", m["Label"], any("x3"))
	wantEq(t, "off_mode TwoPhaseCommit", m["TwoPhaseCommit"], any("false"))

	// 2PC wins over group commit: a normal 2PC load, label kept.
	m, raw = load(t, s, "orders", "1\ta\n", hdr{"group_commit": "sync_mode", "label": "x4", "two_phase_commit": "true"})
	wantEq(t, "2pc "+raw, m["Status"], any("Success"))
	wantEq(t, "2pc TwoPhaseCommit", m["TwoPhaseCommit"], any("true"))
	wantEq(t, "2pc state", s.LabelState(testDB, "x4"), doris.TxnPrecommitted)

	// partial_columns / partitions also fall back to a normal load.
	m, raw = load(t, s, "orders", "1\ta\n", hdr{"group_commit": "sync_mode", "label": "x5", "partitions": "p1"})
	if _, ok := m["GroupCommit"]; ok {
		t.Fatalf("partitions: group commit used: %s", raw)
	}

	// An empty sized body is a normal load.
	m, raw = load(t, s, "orders", "", hdr{"group_commit": "async_mode", "label": "x6"})
	wantEq(t, "empty body "+raw, m["Status"], any("Success"))
	wantEq(t, "empty body Label", m["Label"], any("x6"))
}

// A chunked body clears the client's label before the label rule, so a
// labelled chunked group-commit load is accepted under a group_commit_ label.
func TestStreamLoad_GroupCommitChunkedClearsLabel_StreamLoadCpp(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	req, err := http.NewRequest(http.MethodPut, s.BEURL()+"/api/demo/orders/_stream_load",
		io.MultiReader(bytes.NewReader([]byte("1\ta\n"))))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1 // chunked
	req.SetBasicAuth("root", "")
	req.Header.Set("label", "mine")
	req.Header.Set("group_commit", "sync_mode")
	resp, err := noRedirect().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	m := decode(t, string(raw))
	wantEq(t, "Status "+string(raw), m["Status"], any("Success"))
	if l, _ := m["Label"].(string); !groupCommitLabelRE.MatchString(l) {
		t.Fatalf("Label %q, want a group_commit_ label", l)
	}
	wantEq(t, "client label unused", s.LabelState(testDB, "mine"), doris.TxnUnknown)
}

// A group-commit load is checked like a normal one (table, filter ratio) and
// a failed load adds nothing to the internal load.
func TestStreamLoad_GroupCommitFailures(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	m, raw := load(t, s, "nope", "1\ta\n", hdr{"group_commit": "sync_mode"})
	wantEq(t, "unknown table "+raw, m["Status"], any("Fail"))
	if msg, _ := m["Message"].(string); !strings.Contains(msg, "table not found, tableName=nope") {
		t.Fatalf("Message %q", msg)
	}
	m, raw = load(t, s, "orders", "x\ty\tz\n", hdr{"group_commit": "sync_mode"})
	wantEq(t, "filtered "+raw, m["Message"], any("[DATA_QUALITY_ERROR]too many filtered rows"))
	wantEq(t, "GroupCommit on a failed group-commit load", m["GroupCommit"], any(true))
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 0)
}

// group_commit_data_bytes (table property) commits the internal load as soon
// as it holds that many bytes, before the interval (DOC-GC).
func TestStreamLoad_GroupCommitAsync_DataBytes_GroupCommitManual(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithClock(NewManualClock(time.Time{})))
	tb := ordersTable("small")
	tb.Properties["group_commit_data_bytes"] = "8"
	if err := s.CreateTableSchema(testDB, tb); err != nil {
		t.Fatal(err)
	}
	m1, _ := load(t, s, "small", "1\ta\n", hdr{"group_commit": "async_mode"})
	rows, _ := s.Rows(testDB, "small")
	wantEq(t, "rows below the byte limit", len(rows), 0)
	m2, _ := load(t, s, "small", "2\tb\n", hdr{"group_commit": "async_mode"})
	wantEq(t, "same internal load", m2["Label"], m1["Label"])
	rows, _ = s.Rows(testDB, "small")
	wantEq(t, "rows at the byte limit", len(rows), 2)
}

// A table dropped while a group-commit body streams: the internal load
// resolves the table by id and the load fails; nothing reaches the
// re-created table.
func TestStreamLoad_GroupCommitTableDropped_FrontendServiceImpl(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h, err := s.Fault(Fault{Op: FaultStream, Block: true})
	if err != nil {
		t.Fatal(err)
	}
	done := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"group_commit": "sync_mode"}, "1\ta\n")
	if err := h.Wait(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	dropTableSQL(t, s, "orders")
	if err := s.CreateTableSchema(testDB, ordersTable("orders")); err != nil {
		t.Fatal(err)
	}
	h.Release()
	m := <-done
	if m == nil {
		t.Fatal("transport error")
	}
	wantEq(t, "Status", m["Status"], any("Fail"))
	if msg, _ := m["Message"].(string); !strings.Contains(msg, "unknown table, table_id=") {
		t.Fatalf("Message %q", msg)
	}
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows", len(rows), 0)
}
