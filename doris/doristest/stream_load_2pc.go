package doristest

// Behavior: BE PUT /api/{db}/_stream_load_2pc and /api/{db}/{table}/_stream_load_2pc
// ({table} ignored) (doris-api.md §3.2–§3.4, BE-2PC + FE-FSI loadTxn2PCImpl):
//   - txn_id (std::stoull: leading digits parsed, "12,3" → 12) else
//     {"status": "INTERNAL_ERROR", "msg": "convert txn_id [<x>] failed, reason=stoull"};
//   - txn_operation exactly "commit" or "abort", else INTERNAL_ERROR
//     "transaction operation should be 'commit' or 'abort'";
//   - Basic auth present, else NOT_AUTHORIZED "no valid Basic authorization";
//   - FE side (all ANALYSIS_ERROR, msg "TStatus: errCode = N, detailMessage = …"):
//     password, db exists, txn_id takes precedence over label; by label the
//     txn is searched among PRECOMMITTED (commit) or PRECOMMITTED/PREPARE
//     (abort): "transaction not found, label=<l>" / "running transaction not
//     found, label=<l>"; by id within the db: "transaction [<id>] not found";
//     then the state checks of §3.3 (txn.go).
//   - Success: {"status": "Success", "msg": "[label [<l>] ][transaction [<id>] ]<op> successfully."}
//     with a prefix for each header sent. PrettyWriter, no trailing newline, HTTP 200.
//   - Fault ops "commit" / "abort" fire after resolution, before acting.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/doris-sink/doris-sink/doris"
)

func write2PC(w http.ResponseWriter, status, msg string) {
	writeBEJSON(w, prettyJSON([]field{{"status", status}, {"msg", msg}}))
}

// stoull emulates std::stoull: optional leading spaces and sign, then at
// least one decimal digit; the rest is ignored.
func stoull(s string) (int64, bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	if i < len(s) && s[i] == '+' {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0, false
	}
	n, err := strconv.ParseInt(s[i:j], 10, 64)
	return n, err == nil
}

func (s *Server) beStreamLoad2PC(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	db := r.PathValue("db")
	idHeader := r.Header.Get("txn_id")
	label := r.Header.Get("label")
	var id int64
	if idHeader != "" {
		n, ok := stoull(idHeader)
		if !ok {
			write2PC(w, codeInternal, fmt.Sprintf("convert txn_id [%s] failed, reason=stoull", idHeader))
			return
		}
		id = n
	}
	op := r.Header.Get("txn_operation")
	if op != "commit" && op != "abort" {
		write2PC(w, codeInternal, "transaction operation should be 'commit' or 'abort'")
		return
	}
	user, password, ok := basicAuth(r)
	if !ok {
		write2PC(w, codeNotAuth, "no valid Basic authorization")
		return
	}

	s.mu.Lock()
	t, ferr := s.resolve2PCLocked(user, password, clientIP(r), db, id, idHeader != "", label, op)
	var tbl, tlabel string
	if t != nil {
		tbl, tlabel = t.table, t.label
	}
	s.mu.Unlock()
	if ferr != nil {
		write2PC(w, ferr.code, "TStatus: "+ferr.detail())
		return
	}

	fop := FaultCommit
	if op == "abort" {
		fop = FaultAbort
	}
	act := s.fault(r.Context(), fop, db, tbl, tlabel)
	if act != nil && act.refuse {
		dropConn(w)
		return
	}
	if act != nil && act.err != nil {
		write2PC(w, orDefault(act.err.Status, codeInternal), act.err.Message)
		return
	}

	s.mu.Lock()
	if op == "commit" {
		ferr = s.commit2PCLocked(t)
	} else {
		ferr = s.abort2PCLocked(t, reasonUserAbort)
	}
	s.mu.Unlock()
	if act != nil && act.applyThenDrop {
		dropConn(w)
		return
	}
	if ferr != nil {
		write2PC(w, ferr.code, "TStatus: "+ferr.detail())
		return
	}
	var msg strings.Builder
	if label != "" {
		fmt.Fprintf(&msg, "label [%s] ", label)
	}
	if idHeader != "" {
		fmt.Fprintf(&msg, "transaction [%s] ", idHeader)
	}
	msg.WriteString(op + " successfully.")
	write2PC(w, statusSuccess, msg.String())
}

// resolve2PCLocked finds the txn a 2PC request means (§3.3 steps 1–3).
func (s *Server) resolve2PCLocked(user, password, ip, db string, id int64, byID bool, label, op string) (*txn, *feError) {
	if pw, ok := s.users[user]; !ok || pw != password {
		return nil, analysisErr("Access denied for user '%s'@'%s' (using password: %s)", user, ip, yesNo(password != ""))
	}
	if db == "" {
		return nil, analysisErr("No database selected.")
	}
	d, ok := s.dbs[db]
	if !ok {
		e := unknownDBErr(db)
		e.code = codeAnalysis
		return nil, e
	}
	if !byID {
		if label == "" {
			return nil, analysisErr("No transaction id or label selected.")
		}
		ts := d.txns.byLabel[label]
		if len(ts) == 0 {
			return nil, analysisErr("transaction not found, label=%s", label)
		}
		var found *txn
		for _, t := range ts {
			if t.status == doris.TxnPrecommitted || (op == "abort" && t.status == doris.TxnPrepare) {
				found = t
			}
		}
		if found == nil {
			return nil, analysisErr("running transaction not found, label=%s", label)
		}
		id = found.id
	}
	t, ok := d.txns.byID[id]
	if !ok {
		return nil, analysisErr("transaction [%d] not found", id)
	}
	return t, nil
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
