package doristest

// Behavior: FE GET /api/{db}/get_load_state?label=<label> (docs/doris-facts.md §6.1,
// FE-GLS). HTTP 200, ResponseBody JSON (msg, code, data, count):
//   - auth failure → {"msg":"Unauthorized","code":401,...} (fe_http.go);
//   - no label → {"msg":"Bad Request","code":403,"data":"No label selected","count":0};
//   - unknown db → {"msg":"Error","code":1,"data":"errCode = 7, detailMessage =
//     unknown databases, dbName=<db>","count":0} (okWithCommonError(e.getMessage())
//     of getDbOrMetaException, read in GetStreamLoadState.java / CatalogIf.java);
//   - else {"msg":"success","code":0,"data":"<state of the label's latest txn>","count":0},
//     UNKNOWN when the label was never used or was cleaned.
//   - Fault op "load_state" fires after auth; Err answers
//     {"msg":"Error","code":1,"data":<message>,"count":0}.

import (
	"net/http"

	"github.com/doris-sink/doris-sink/doris"
)

func (s *Server) feGetLoadState(w http.ResponseWriter, r *http.Request) {
	s.RunCleaner()
	if _, _, ok := s.feAuth(w, r); !ok {
		return
	}
	db := r.PathValue("db")
	label := r.URL.Query().Get("label")
	if label == "" {
		writeFEResponseBody(w, "Bad Request", 403, "No label selected")
		return
	}
	act := s.fault(r.Context(), FaultLoadState, db, "", label)
	if act != nil && act.refuse {
		dropConn(w)
		return
	}
	if act != nil && act.err != nil {
		writeFEResponseBody(w, "Error", 1, act.err.Message)
		return
	}
	s.mu.Lock()
	d, ok := s.dbs[db]
	state := doris.TxnUnknown
	if ok {
		if t := d.txns.latest(label); t != nil {
			state = t.status
		}
	}
	s.mu.Unlock()
	if act != nil && act.applyThenDrop {
		dropConn(w)
		return
	}
	if !ok {
		// getDbOrMetaException's MetaNotFoundException, e.getMessage().
		writeFEResponseBody(w, "Error", 1, "errCode = 7, detailMessage = unknown databases, dbName="+db)
		return
	}
	writeFEResponseBody(w, "success", 0, string(state))
}
