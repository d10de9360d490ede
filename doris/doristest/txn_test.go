package doristest

import (
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

func TestTxn_PrecommitTimeoutByTxnManager_5(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk))
	id := precommit(t, s, "slow", "1\ta\n")
	clk.Advance(3600 * time.Second)
	wantEq(t, "at 3600s", s.LabelState(testDB, "slow"), doris.TxnPrecommitted)
	clk.Advance(time.Second)
	tx, err := s.TxnByID(testDB, id)
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "state", tx.Status, doris.TxnAborted)
	wantEq(t, "reason", tx.Reason, "timeout by txn manager")
	_, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "commit", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already aborted. abort reason: timeout by txn manager")
}

func TestTxn_PrecommitTimeoutIsCapturedAtBegin_5(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk), FEConfig(ConfPrecommitTimeout, 60))
	precommit(t, s, "p", "1\ta\n")
	if err := s.SetFEConfig(ConfPrecommitTimeout, 3600); err != nil {
		t.Fatal(err)
	}
	clk.Advance(61 * time.Second)
	wantEq(t, "state", s.LabelState(testDB, "p"), doris.TxnAborted)
}

func TestTxn_PrepareTimeout_5(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk))
	if _, err := s.Fault(Fault{Op: FaultBegin, ApplyThenDrop: true}); err != nil {
		t.Fatal(err)
	}
	_, _ = doErr("PUT", s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "hung", "timeout": "10"}, "1\ta\n")
	tx, _ := s.TxnByLabel(testDB, "hung")
	wantEq(t, "state", tx.Status, doris.TxnPrepare)
	wantEq(t, "TimeoutMs", tx.TimeoutMs, 10000)
	clk.Advance(11 * time.Second)
	tx, _ = s.TxnByLabel(testDB, "hung")
	wantEq(t, "state", tx.Status, doris.TxnAborted)
	wantEq(t, "reason", tx.Reason, "timeout by txn manager")
}

func TestTimeoutPrecommittedNow_5(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	precommit(t, s, "a", "1\ta\n")
	precommit(t, s, "b", "1\ta\n")
	wantEq(t, "aborted", s.TimeoutPrecommitted(), 2)
	tx, _ := s.TxnByLabel(testDB, "b")
	wantEq(t, "reason", tx.Reason, "timeout by txn manager")
}

func TestLabels_RetentionByTime_4(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk))
	load(t, s, "orders", "1\ta\n", hdr{"label": "old"})
	id := precommit(t, s, "open", "1\ta\n")
	clk.Advance(43200 * time.Second)
	wantEq(t, "at 12h", s.LabelState(testDB, "old"), doris.TxnVisible)
	clk.Advance(time.Second)
	wantEq(t, "after 12h", s.LabelState(testDB, "old"), doris.TxnUnknown)
	if _, err := s.TxnByLabel(testDB, "old"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("TxnByLabel after expiry: %v", err)
	}
	// The PRECOMMITTED txn timed out at 3600 s, so it expires at 3600+43200 s.
	wantEq(t, "open", s.LabelState(testDB, "open"), doris.TxnAborted)
	clk.Advance(3600 * time.Second)
	_, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "abort"})
	wantEq(t, "expired id", msg, analysisPrefix+"transaction ["+itoa(id)+"] not found")
	// An expired label is free again.
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "old"})
	wantEq(t, "reuse", m["Status"], any("Success"))
}

func TestLabels_RetentionByCount_4(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk), FEConfig(ConfLabelNumThreshold, 3))
	for _, l := range []string{"l1", "l2", "l3", "l4", "l5"} {
		load(t, s, "orders", "1\ta\n", hdr{"label": l})
		clk.Advance(time.Second)
	}
	for l, want := range map[string]doris.TxnStatus{"l1": doris.TxnUnknown, "l2": doris.TxnUnknown, "l3": doris.TxnVisible, "l5": doris.TxnVisible} {
		wantEq(t, l, s.LabelState(testDB, l), want)
	}
}

func TestExpireLabelsNow_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	load(t, s, "orders", "1\ta\n", hdr{"label": "v"})
	precommit(t, s, "p", "1\ta\n")
	wantEq(t, "removed", s.ExpireLabels(testDB), 1)
	wantEq(t, "v", s.LabelState(testDB, "v"), doris.TxnUnknown)
	wantEq(t, "p", s.LabelState(testDB, "p"), doris.TxnPrecommitted)
}

func TestTxn_RunningTxnCap_8(t *testing.T) {
	t.Parallel()
	s := newServer(t, FEConfig(ConfMaxRunningTxnPerDB, 2))
	precommit(t, s, "r1", "1\ta\n")
	precommit(t, s, "r2", "1\ta\n")
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "r3", "two_phase_commit": "true"})
	wantEq(t, "Status", m["Status"], any("Fail"))
	msg := m["Message"].(string)
	if !strings.HasPrefix(msg, "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current running txns on db ") ||
		!strings.HasSuffix(msg, " is 2, larger than limit 2") {
		t.Fatalf("Message = %q", msg)
	}
	wantEq(t, "r3", s.LabelState(testDB, "r3"), doris.TxnUnknown)
	txn2pc(t, s, hdr{"label": "r1", "txn_operation": "abort"})
	m, _ = load(t, s, "orders", "1\ta\n", hdr{"label": "r3", "two_phase_commit": "true"})
	wantEq(t, "after abort", m["Status"], any("Success"))
}

func TestTxn_IDsIncreasePerCluster_11_2(t *testing.T) {
	t.Parallel()
	s := newServer(t, FirstTxnID(5000))
	if err := s.CreateDatabase("db2"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTableSchema("db2", ordersTable("t")); err != nil {
		t.Fatal(err)
	}
	a := precommit(t, s, "x", "1\ta\n")
	_, raw := do(t, "PUT", s.BEURL()+"/api/db2/t/_stream_load", hdr{"label": "x", "two_phase_commit": "true"}, "1\ta\n")
	b := num(t, decode(t, raw), "TxnId")
	wantEq(t, "first", a, 5000)
	wantEq(t, "second (same label, other db)", b, 5001)
}

// COMMITTED never times out: it waits for publish (docs/doris-facts.md §5).
func TestTxn_CommittedNeverTimesOut_5(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk), HoldPublish())
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"label": "c1", "timeout": "10"})
	wantEq(t, "non-2PC while held", m["Status"], any("Publish Timeout"))
	id := precommit(t, s, "c2", "2\tb\n")
	if st, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"}); st != "Success" {
		t.Fatalf("commit c2: %s", msg)
	}
	clk.Advance(4000 * time.Second) // past the 10 s load timeout and the 3600 s precommit timeout
	wantEq(t, "c1", s.LabelState(testDB, "c1"), doris.TxnCommitted)
	wantEq(t, "c2", s.LabelState(testDB, "c2"), doris.TxnCommitted)
	s.SetHoldPublish(false)
	wantEq(t, "c1 after resume", s.LabelState(testDB, "c1"), doris.TxnVisible)
	wantEq(t, "c2 after resume", s.LabelState(testDB, "c2"), doris.TxnVisible)
}

// Held txns publish in commit order, so the later commit's version wins on a
// Unique Key table (docs/doris-facts.md §5, §7), even when a ManualClock gives both
// commits the same time.
func TestTxn_HeldPublishKeepsCommitOrder_5(t *testing.T) {
	t.Parallel()
	s := newServer(t, WithClock(NewManualClock(time.Time{})), HoldPublish())
	if err := s.CreateTable(testDB, "CREATE TABLE u (id BIGINT, v VARCHAR(32)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1"); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, l := range []string{"first", "second"} {
		m, raw := load(t, s, "u", "1\t"+l+"\n", hdr{"label": l, "two_phase_commit": "true"})
		if m["Status"] != "Success" {
			t.Fatalf("precommit %s: %s", l, raw)
		}
		ids[l] = num(t, m, "TxnId")
	}
	for _, l := range []string{"second", "first"} { // the older txn commits last
		if st, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(ids[l]), "txn_operation": "commit"}); st != "Success" {
			t.Fatalf("commit %s: %s", l, msg)
		}
	}
	s.SetHoldPublish(false)
	rows, err := s.Rows(testDB, "u")
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "rows", len(rows), 1)
	wantEq(t, "value of the last commit", rows[0][1], any("first"))
}
