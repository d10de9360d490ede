package doristest

// Behavior: BE PUT /api/{db}/_stream_load_2pc and /api/{db}/{table}/_stream_load_2pc
// ({table} ignored) (docs/doris-facts.md §3.2–§3.4; BE-2PC stream_load_2pc.cpp and
// FE-FSI loadTxn2PCImpl, both read in source):
//   - txn_id parsed like std::stoull (leading blanks, optional sign, leading
//     digits; "12,3" → 12, "-5" wraps to -5) else
//     {"status": "INTERNAL_ERROR", "msg": "convert txn_id [<x>] failed, reason=stoull"};
//     a parsed id of -1 is the BE's "unset" value, so the label is used;
//   - txn_operation exactly "commit" or "abort", else INTERNAL_ERROR
//     "transaction operation should be 'commit' or 'abort'";
//   - a missing Basic header is not an error on the BE (its status is
//     overwritten); the FE then sees user "" and denies access;
//   - FE side (all ANALYSIS_ERROR, msg "TStatus: errCode = 2, detailMessage = …",
//     in this order): db exists ("unknown database, database=<db>"); without
//     a txn id the label's txn is searched among PRECOMMITTED (commit) or
//     PRECOMMITTED/PREPARE (abort): "transaction not found, label=<l>" /
//     "running transaction not found, label=<l>" (an empty label included);
//     by id within the db: "transaction [<id>] not found"; for commit, the
//     txn's table by id ("unknown table, tableId=<id>", errCode 7, when it
//     was dropped; abort goes on); only then the password ("Access denied for user '<u>@<ip>' …"); then the state checks
//     of §3.3 (txn.go).
//   - Success: {"status": "Success", "msg": "[label [<l>] ][transaction [<raw txn_id>] ]<op> successfully."}
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

// stoull emulates std::stoull as the BE uses it (docs/doris-facts.md §3.4): leading
// white space, an optional sign, then at least one decimal digit; the rest
// is ignored. A negative value wraps modulo 2^64 (strtoull), and the result is
// stored in an int64 txn id, so "-5" means -5. Values beyond 2^64-1 fail
// (out_of_range, whose what() is also "stoull").
func stoull(s string) (int64, bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:j], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return int64(n), true
}

// defaultTxnID is StreamLoadContext::default_txn_id: the BE sends no txn id
// to the FE when the parsed header equals it.
const defaultTxnID = -1

func (s *Server) beStreamLoad2PC(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	db := r.PathValue("db")
	idHeader := r.Header.Get("txn_id")
	label := r.Header.Get("label")
	id := int64(defaultTxnID)
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
	// parse_basic_auth failing only logs: the status is overwritten by the
	// FE call, which then sees an empty user.
	user, password, _ := basicAuth(r)

	s.mu.Lock()
	t, ferr := s.resolve2PCLocked(user, password, clientIP(r), db, id, label, op)
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

// resolve2PCLocked is loadTxn2PCImpl up to the state checks (§3.3 steps
// 1–3), in the FE's order: db, txn (by label when id is defaultTxnID), then
// the password.
func (s *Server) resolve2PCLocked(user, password, ip, db string, id int64, label, op string) (*txn, *feError) {
	if db == "" {
		return nil, analysisErr("No database selected.")
	}
	d, ok := s.dbs[db]
	if !ok {
		// A plain UserException here (errCode = 2), unlike loadTxnBegin's
		// MetaNotFoundException.
		return nil, analysisErr("unknown database, database=%s", db)
	}
	if id == defaultTxnID {
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
	if op == "commit" {
		if err := t.commit2PCTableLocked(); err != nil {
			return nil, err
		}
	}
	if msg := s.accessDeniedLocked(user, password, ip); msg != "" {
		return nil, analysisErr("%s", msg)
	}
	return t, nil
}
