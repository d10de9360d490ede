package doristest

import (
	"context"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
)

const analysisPrefix = "TStatus: errCode = 2, detailMessage = "

func TestTwoPC_PrecommitThenCommitByTxnID_Visible_3_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "c1", "1\ta\n2\tb\n")
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows before commit", len(rows), 0)
	wantEq(t, "state", s.LabelState(testDB, "c1"), doris.TxnPrecommitted)
	st, msg, raw := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "raw", raw, "{\n    \"status\": \"Success\",\n    \"msg\": \"transaction ["+itoa(id)+"] commit successfully.\"\n}")
	wantEq(t, "status", st, "Success")
	_ = msg
	rows, _ = s.Rows(testDB, "orders")
	wantEq(t, "rows after commit", len(rows), 2)
	tx, err := s.TxnByID(testDB, id)
	if err != nil || tx.Status != doris.TxnVisible || tx.PreCommitTime.IsZero() || tx.FinishTime.IsZero() {
		t.Fatalf("txn = %+v, %v", tx, err)
	}
}

func TestTwoPC_CommitTwice_3_3(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "c2", "1\ta\n")
	txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	st, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "status", st, "ANALYSIS_ERROR")
	wantEq(t, "msg", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already visible, not pre-committed.")
	_, msg, _ = txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "abort"})
	wantEq(t, "abort visible", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already VISIBLE, could not abort.")
	// By label: no PRECOMMITTED txn left.
	_, msg, _ = txn2pc(t, s, hdr{"label": "c2", "txn_operation": "commit"})
	wantEq(t, "by label", msg, analysisPrefix+"running transaction not found, label=c2")
}

func TestTwoPC_CommitWhileCommitted_3_3(t *testing.T) {
	t.Parallel()
	s := newServer(t, HoldPublish())
	id := precommit(t, s, "c3", "1\ta\n")
	st, _, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "status", st, "Success")
	wantEq(t, "state", s.LabelState(testDB, "c3"), doris.TxnCommitted)
	_, msg, _ := txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "msg", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already committed, not pre-committed.")
	_, msg, _ = txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "abort"})
	wantEq(t, "abort", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already COMMITTED, could not abort.")
}

func TestTwoPC_AbortByLabel_3_3(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "a1", "1\ta\n")
	st, msg, _ := txn2pc(t, s, hdr{"label": "a1", "txn_operation": "abort"})
	wantEq(t, "status", st, "Success")
	wantEq(t, "msg", msg, "label [a1] abort successfully.")
	tx, _ := s.TxnByLabel(testDB, "a1")
	wantEq(t, "state", tx.Status, doris.TxnAborted)
	wantEq(t, "reason", tx.Reason, "User Abort")
	_, msg, _ = txn2pc(t, s, hdr{"label": "a1", "txn_operation": "abort"})
	wantEq(t, "again by label", msg, analysisPrefix+"running transaction not found, label=a1")
	_, msg, _ = txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "abort"})
	wantEq(t, "again by id", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already aborted, abort reason: User Abort")
	_, msg, _ = txn2pc(t, s, hdr{"txn_id": itoa(id), "txn_operation": "commit"})
	wantEq(t, "commit aborted", msg, analysisPrefix+"transaction ["+itoa(id)+"] is already aborted. abort reason: User Abort")
}

func TestTwoPC_Messages_3_3(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, msg, _ := txn2pc(t, s, hdr{"label": "never", "txn_operation": "commit"})
	wantEq(t, "unknown label", msg, analysisPrefix+"transaction not found, label=never")
	_, msg, _ = txn2pc(t, s, hdr{"txn_id": "999999", "txn_operation": "commit"})
	wantEq(t, "unknown id", msg, analysisPrefix+"transaction [999999] not found")
	st, msg, _ := txn2pc(t, s, hdr{"txn_id": "1", "txn_operation": "Commit"})
	wantEq(t, "bad op status", st, "INTERNAL_ERROR")
	wantEq(t, "bad op", msg, "transaction operation should be 'commit' or 'abort'")
	st, msg, _ = txn2pc(t, s, hdr{"txn_id": "abc", "txn_operation": "commit"})
	wantEq(t, "bad id status", st, "INTERNAL_ERROR")
	wantEq(t, "bad id", msg, "convert txn_id [abc] failed, reason=stoull")

	// A PREPARE txn cannot be committed, but can be aborted by label.
	if _, err := s.Fault(Fault{Op: FaultBegin, Label: "prep", ApplyThenDrop: true}); err != nil {
		t.Fatal(err)
	}
	_, _ = doErr("PUT", s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "prep", "two_phase_commit": "true"}, "1\ta\n")
	tx, err := s.TxnByLabel(testDB, "prep")
	if err != nil {
		t.Fatal(err)
	}
	_, msg, _ = txn2pc(t, s, hdr{"txn_id": itoa(tx.ID), "txn_operation": "commit"})
	wantEq(t, "commit prepare", msg, analysisPrefix+"transaction ["+itoa(tx.ID)+"] is prepare, not pre-committed.")
	_, msg, _ = txn2pc(t, s, hdr{"label": "prep", "txn_operation": "commit"})
	wantEq(t, "commit prepare by label", msg, analysisPrefix+"running transaction not found, label=prep")
	// Both headers: txn_id wins and both appear in the message.
	st, msg, _ = txn2pc(t, s, hdr{"label": "ignored", "txn_id": itoa(tx.ID), "txn_operation": "abort"})
	wantEq(t, "status", st, "Success")
	wantEq(t, "both", msg, "label [ignored] transaction ["+itoa(tx.ID)+"] abort successfully.")

	// The txn id is looked up within the URL's db.
	if err := s.CreateDatabase("other"); err != nil {
		t.Fatal(err)
	}
	_, raw := do(t, "PUT", s.BEURL()+"/api/other/_stream_load_2pc", hdr{"txn_id": itoa(tx.ID), "txn_operation": "abort"}, "")
	wantEq(t, "other db", decode(t, raw)["msg"], any(analysisPrefix+"transaction ["+itoa(tx.ID)+"] not found"))
	// {table} in the URL is accepted and ignored (§3.1).
	id := precommit(t, s, "tbl", "1\ta\n")
	_, raw = do(t, "PUT", s.BEURL()+"/api/demo/whatever/_stream_load_2pc", hdr{"txn_id": itoa(id), "txn_operation": "commit"}, "")
	wantEq(t, "table route", decode(t, raw)["status"], any("Success"))
}

// Abort by label also finds a PREPARE txn (statuses [PRECOMMITTED, PREPARE],
// docs/doris-facts.md §3.3); the load still streaming then fails.
func TestTwoPC_AbortPrepareByLabel_3_3(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h, err := s.Fault(Fault{Op: FaultStream, Block: true})
	if err != nil {
		t.Fatal(err)
	}
	done := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "prep", "two_phase_commit": "true"}, "1\ta\n")
	if err := h.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "while streaming", s.LabelState(testDB, "prep"), doris.TxnPrepare)
	st, msg, _ := txn2pc(t, s, hdr{"label": "prep", "txn_operation": "abort"})
	wantEq(t, "status", st, "Success")
	wantEq(t, "msg", msg, "label [prep] abort successfully.")
	h.Release()
	m := <-done
	if m == nil || m["Status"] != "Fail" {
		t.Fatalf("load after its txn was aborted: %v", m)
	}
	tx, _ := s.TxnByLabel(testDB, "prep")
	wantEq(t, "state", tx.Status, doris.TxnAborted)
	wantEq(t, "reason", tx.Reason, "User Abort")
}
