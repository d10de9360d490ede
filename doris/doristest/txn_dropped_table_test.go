package doristest

import (
	"context"
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
)

func tableID(t *testing.T, s *Server, name string) int64 {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	te, ok := s.dbs[testDB].tables[name]
	if !ok {
		t.Fatalf("no table %s", name)
	}
	return te.id
}

func dropTableSQL(t *testing.T, s *Server, name string) {
	t.Helper()
	if _, err := openMySQL(t, s).Exec("DROP TABLE " + name); err != nil {
		t.Fatalf("DROP TABLE %s: %v", name, err)
	}
}

// A PRECOMMITTED txn whose table was dropped cannot commit: loadTxn2PCImpl
// looks the txn's tables up by id (Database.getTablesOnIdOrderOrThrowException,
// fe FrontendServiceImpl.java) and fails with "unknown table, tableId=<id>";
// a re-created table of the same name is another id and gets no rows. Abort
// still works (getTablesOnIdOrderIfExist).
func TestTxn2PC_CommitAfterDropTable_FrontendServiceImpl(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := precommit(t, s, "gone", "1\ta\n2\tb\n")
	oldID := tableID(t, s, "orders")
	dropTableSQL(t, s, "orders")
	if err := s.CreateTableSchema(testDB, ordersTable("orders")); err != nil {
		t.Fatal(err)
	}
	status, msg, _ := txn2pc(t, s, hdr{"txn_id": fmt.Sprint(id), "txn_operation": "commit"})
	wantEq(t, "status", status, "ANALYSIS_ERROR")
	wantEq(t, "msg", msg, fmt.Sprintf("TStatus: errCode = 7, detailMessage = unknown table, tableId=%d", oldID))
	wantEq(t, "state after failed commit", s.LabelState(testDB, "gone"), doris.TxnPrecommitted)
	rows, err := s.Rows(testDB, "orders")
	if err != nil || len(rows) != 0 {
		t.Fatalf("re-created table rows = %v, %v; want none", rows, err)
	}
	status, msg, _ = txn2pc(t, s, hdr{"txn_id": fmt.Sprint(id), "txn_operation": "abort"})
	wantEq(t, "abort status "+msg, status, "Success")
	wantEq(t, "state after abort", s.LabelState(testDB, "gone"), doris.TxnAborted)
}

// A load whose table is dropped while its body streams fails at
// precommit / commit: loadTxnPreCommit and loadTxnCommit resolve the BE's
// table_id (queryLoadCommitTables, fe FrontendServiceImpl.java) and the BE
// rolls the txn back.
func TestStreamLoad_TableDroppedMidLoad_FrontendServiceImpl(t *testing.T) {
	t.Parallel()
	for _, twoPC := range []bool{false, true} {
		t.Run(fmt.Sprintf("2pc=%v", twoPC), func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			oldID := tableID(t, s, "orders")
			h, err := s.Fault(Fault{Op: FaultStream, Block: true})
			if err != nil {
				t.Fatal(err)
			}
			hd := hdr{"label": "mid"}
			if twoPC {
				hd["two_phase_commit"] = "true"
			}
			done := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hd, "1\ta\n")
			if err := h.Wait(context.Background(), 1); err != nil {
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
			wantEq(t, "Message", m["Message"], any(fmt.Sprintf("[ANALYSIS_ERROR]TStatus: errCode = 7, detailMessage = unknown table, table_id=%d", oldID)))
			wantEq(t, "state", s.LabelState(testDB, "mid"), doris.TxnAborted)
			rows, _ := s.Rows(testDB, "orders")
			wantEq(t, "rows in the re-created table", len(rows), 0)
		})
	}
}

// A COMMITTED txn whose table is force-dropped before publish never applies
// its rows to any table (Doris refuses a plain DROP while COMMITTED txns
// exist; DROP TABLE ... FORCE goes ahead).
func TestTxn_PublishAfterForceDrop_DatabaseTransactionMgr(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.SetHoldPublish(true)
	m, raw := load(t, s, "orders", "1\ta\n", hdr{"label": "held"})
	wantEq(t, "Status "+raw, m["Status"], any("Publish Timeout"))
	s.mu.Lock()
	old := s.dbs[testDB].tables["orders"].data
	s.mu.Unlock()
	if _, err := openMySQL(t, s).Exec("DROP TABLE orders FORCE"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTableSchema(testDB, ordersTable("orders")); err != nil {
		t.Fatal(err)
	}
	s.SetHoldPublish(false)
	wantEq(t, "state", s.LabelState(testDB, "held"), doris.TxnVisible)
	rows, _ := s.Rows(testDB, "orders")
	wantEq(t, "rows in the re-created table", len(rows), 0)
	wantEq(t, "rows applied to the dropped table", len(old.Rows()), 0)
}
