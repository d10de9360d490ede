package doristest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/doris"
)

// A partial-update load precommitted before a schema change that lengthens
// a string column fails its commit with Doris's message and stays
// PRECOMMITTED (fe DatabaseTransactionMgr.checkTransactionStateBeforeCommit,
// TransactionState.checkSchemaCompatibility); an added column alone, and a
// full-row load across the same change, commit.
func TestCommitSchemaCompatibility(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	mustExec(t, db, "CREATE TABLE u (id BIGINT NOT NULL, name VARCHAR(10), n INT) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "+
		`PROPERTIES ("enable_unique_key_merge_on_write" = "true")`)
	partial := func(label, body string) int64 {
		t.Helper()
		m, raw := load(t, s, "u", body, hdr{"label": label, "two_phase_commit": "true", "format": "json", "read_json_by_line": "true",
			"partial_columns": "true", "columns": "id,name"})
		if m["Status"] != "Success" {
			t.Fatalf("precommit %s: %s", label, raw)
		}
		return num(t, m, "TxnId")
	}
	full := func(label, body string) int64 {
		t.Helper()
		m, raw := load(t, s, "u", body, hdr{"label": label, "two_phase_commit": "true", "format": "json", "read_json_by_line": "true"})
		if m["Status"] != "Success" {
			t.Fatalf("precommit %s: %s", label, raw)
		}
		return num(t, m, "TxnId")
	}
	commit := func(id int64) (string, string) {
		st, msg, _ := txn2pc(t, s, hdr{"txn_id": fmt.Sprint(id), "txn_operation": "commit"})
		return st, msg
	}

	// ADD COLUMN only: compatible.
	p1 := partial("p1", `{"id":1,"name":"a"}`)
	mustExec(t, db, "ALTER TABLE u ADD COLUMN extra INT")
	if st, msg := commit(p1); st != "Success" {
		t.Fatalf("partial commit after ADD COLUMN: %s %s", st, msg)
	}

	// A longer VARCHAR: the partial load's commit fails, the txn stays PRECOMMITTED.
	p2 := partial("p2", `{"id":2,"name":"b"}`)
	f2 := full("f2", `{"id":3,"name":"c","n":1}`)
	mustExec(t, db, "ALTER TABLE u MODIFY COLUMN name VARCHAR(20)")
	st, msg := commit(p2)
	want := fmt.Sprintf("transaction [%d] check schema compatibility failed, partial update can't commit with old schema sucessfully .", p2)
	if st == "Success" || !strings.Contains(msg, want) {
		t.Fatalf("partial commit after VARCHAR(10)→VARCHAR(20): %s %q, want the message %q", st, msg, want)
	}
	if got := s.LabelState(testDB, "p2"); got != doris.TxnPrecommitted {
		t.Fatalf("after the failed commit: %s, want PRECOMMITTED", got)
	}
	if st, msg := commit(f2); st != "Success" {
		t.Fatalf("full-row commit across the change: %s %s", st, msg)
	}
	if st, msg, _ := txn2pc(t, s, hdr{"txn_id": fmt.Sprint(p2), "txn_operation": "abort"}); st != "Success" {
		t.Fatalf("abort of the refused txn: %s %s", st, msg)
	}
	// A partial load planned after the change commits.
	if st, msg := commit(partial("p3", `{"id":2,"name":"bb"}`)); st != "Success" {
		t.Fatalf("partial load planned after the change: %s %s", st, msg)
	}
	wantEq(t, "rows", strings.Join(queryStrings(t, db, "SELECT id, name, n FROM u ORDER BY id"), ";"), "1|a|NULL;2|bb|NULL;3|c|1")
}

// A non-2PC partial-update load whose table's string column is lengthened
// while its body streams fails at commit and is rolled back.
func TestCommitSchemaCompatibilityNon2PC(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	mustExec(t, db, "CREATE TABLE u (id BIGINT NOT NULL, name VARCHAR(10)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	tx := &txn{id: 1}
	s.mu.Lock()
	d := s.dbs[testDB]
	te := d.tables["u"]
	tx.db, tx.tableID, tx.status = d, te.id, doris.TxnPrepare
	s.planPartialLocked(tx)
	s.mu.Unlock()
	mustExec(t, db, "ALTER TABLE u MODIFY COLUMN name VARCHAR(11)")
	s.mu.Lock()
	_, ferr := s.commitLoadLocked(tx, nil)
	s.mu.Unlock()
	if ferr == nil || !strings.Contains(ferr.msg, "check schema compatibility failed") {
		t.Fatalf("commit: %v, want the schema compatibility failure", ferr)
	}
}

// A Stream Load is planned with the schema of its begin: a column added
// while its body streams is not in the plan, and the load's JSON key for it
// is ignored (docs/doris-facts.md §13). A load begun after the ALTER loads it.
func TestLoadPlannedBeforeAddColumnIgnoresItsKey(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	db := openMySQL(t, s)
	h, err := s.Fault(Fault{Op: FaultStream, Label: "planned-before", Block: true, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Remove()
	pr, pw := io.Pipe()
	done := make(chan map[string]any, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPut, s.BEURL()+"/api/"+testDB+"/orders/_stream_load", pr)
		req.SetBasicAuth("root", "")
		for k, v := range map[string]string{"label": "planned-before", "format": "json", "read_json_by_line": "true"} {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect().Do(req)
		if err != nil {
			done <- nil
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		done <- m
	}()
	if _, err := pw.Write([]byte(`{"id":1,"v":"a"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	// The BE read the first bytes (the load is planned and streaming): ALTER now.
	if err := h.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "ALTER TABLE orders ADD COLUMN qty INT")
	h.Release()
	if _, err := pw.Write([]byte(`{"id":2,"v":"b","qty":5}` + "\n")); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if m := <-done; m == nil || m["Status"] != "Success" {
		t.Fatalf("load: %v", m)
	}
	load(t, s, "orders", `{"id":3,"v":"c","qty":6}`, hdr{"label": "planned-after", "format": "json", "read_json_by_line": "true"})
	wantEq(t, "rows", strings.Join(queryStrings(t, db, "SELECT id, v, qty FROM orders ORDER BY id"), ";"), "1|a|NULL;2|b|NULL;3|c|6")
}
