package doristest

// Regression tests from the fidelity review against Doris source (each names
// the docs/doris-facts.md section and the Doris file the behaviour was read in).

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// Auth.checkPlainPassword → ERR_ACCESS_DENIED_ERROR "Access denied for user
// '%s' (using password: %s)" with user@host as one argument; an unknown user
// always says YES (UserManager.checkPasswordInternal). FE HTTP shows
// formatErrMsg() in data, the BE shows the FE's UserException.
func TestAuth_AccessDeniedMessage_1_3(t *testing.T) {
	t.Parallel()
	s := newServer(t, Users(map[string]string{"root": "pw"}))
	_, body := do(t, "GET", s.FEURL()+"/api/demo/get_load_state?label=x", hdr{"-auth": "", "Authorization": basic("root", "bad")}, "")
	wantEq(t, "FE wrong password", body, `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'root@127.0.0.1' (using password: YES)","count":0}`)
	_, body = do(t, "GET", s.FEURL()+"/api/demo/get_load_state?label=x", hdr{"-auth": "", "Authorization": basic("root", "")}, "")
	wantEq(t, "FE empty password", body, `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'root@127.0.0.1' (using password: NO)","count":0}`)
	_, body = do(t, "GET", s.FEURL()+"/api/demo/get_load_state?label=x", hdr{"-auth": "", "Authorization": basic("nobody", "")}, "")
	wantEq(t, "FE unknown user", body, `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'nobody@127.0.0.1' (using password: YES)","count":0}`)
	m, _ := load(t, s, "orders", "1\ta\n", hdr{"-auth": "", "Authorization": basic("root", ""), "label": "a"})
	wantEq(t, "BE Message", m["Message"], any("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied for user 'root@127.0.0.1' (using password: NO)"))
	wantEq(t, "TxnId", num(t, m, "TxnId"), -1)
}

func basic(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

// loadTxn2PCImpl checks db, then resolves the txn, and only then the password;
// a missing Basic header on the BE is not an error there (BE-2PC overwrites
// the status), so the FE denies the empty user.
func TestTwoPC_ResolveBeforeAuth_3_3(t *testing.T) {
	t.Parallel()
	s := newServer(t, Users(map[string]string{"root": "pw"}))
	auth := basic("root", "pw")
	m, raw := load(t, s, "orders", "1\ta\n", hdr{"-auth": "", "Authorization": auth, "label": "p", "two_phase_commit": "true"})
	if m["Status"] != "Success" {
		t.Fatalf("precommit: %s", raw)
	}
	id := itoa(num(t, m, "TxnId"))
	bad := basic("root", "wrong")
	st, msg, _ := txn2pc(t, s, hdr{"-auth": "", "Authorization": bad, "label": "nope", "txn_operation": "commit"})
	wantEq(t, "status", st, "ANALYSIS_ERROR")
	wantEq(t, "unknown label before auth", msg, analysisPrefix+"transaction not found, label=nope")
	_, msg, _ = txn2pc(t, s, hdr{"-auth": "", "Authorization": bad, "txn_id": "999999", "txn_operation": "commit"})
	wantEq(t, "unknown id before auth", msg, analysisPrefix+"transaction [999999] not found")
	_, msg, _ = txn2pc(t, s, hdr{"-auth": "", "Authorization": bad, "txn_id": id, "txn_operation": "commit"})
	wantEq(t, "wrong password", msg, analysisPrefix+"Access denied for user 'root@127.0.0.1' (using password: YES)")
	st, msg, _ = txn2pc(t, s, hdr{"-auth": "", "txn_id": id, "txn_operation": "abort"})
	wantEq(t, "no Basic header: status", st, "ANALYSIS_ERROR")
	wantEq(t, "no Basic header", msg, analysisPrefix+"Access denied for user '@127.0.0.1' (using password: YES)")
	wantEq(t, "state", s.LabelState(testDB, "p"), doris.TxnPrecommitted)
}

// loadTxn2PCImpl raises a plain UserException for an unknown db (errCode = 2,
// not MetaNotFoundException's 7), and looks up an empty label when neither
// txn_id nor label reaches the BE directly.
func TestTwoPC_UnknownDBAndNoIDOrLabel_3_3(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, raw := do(t, "PUT", s.BEURL()+"/api/nodb/_stream_load_2pc", hdr{"txn_id": "1", "txn_operation": "commit"}, "")
	m := decode(t, raw)
	wantEq(t, "status", m["status"], any("ANALYSIS_ERROR"))
	wantEq(t, "msg", m["msg"], any(analysisPrefix+"unknown database, database=nodb"))
	_, msg, _ := txn2pc(t, s, hdr{"txn_operation": "abort"})
	wantEq(t, "neither header", msg, analysisPrefix+"transaction not found, label=")
}

// std::stoull: leading digits ("<id>,999" is <id>), a sign wraps ("-5" is -5),
// a parsed -1 is the BE's unset txn id (the label is used), > 2^64-1 fails.
// The success message echoes the raw header (BE-2PC).
func TestTwoPC_StoullQuirks_3_4(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	id := itoa(precommit(t, s, "q1", "1\ta\n"))
	st, msg, _ := txn2pc(t, s, hdr{"txn_id": id + ",999", "txn_operation": "commit"})
	wantEq(t, "status", st, "Success")
	wantEq(t, "msg", msg, "transaction ["+id+",999] commit successfully.")
	_, msg, _ = txn2pc(t, s, hdr{"txn_id": "-5", "txn_operation": "commit"})
	wantEq(t, "negative", msg, analysisPrefix+"transaction [-5] not found")
	precommit(t, s, "q2", "1\ta\n")
	st, msg, _ = txn2pc(t, s, hdr{"txn_id": "18446744073709551615", "label": "q2", "txn_operation": "abort"})
	wantEq(t, "-1 status", st, "Success")
	wantEq(t, "-1 uses the label", msg, "label [q2] transaction [18446744073709551615] abort successfully.")
	wantEq(t, "q2", s.LabelState(testDB, "q2"), doris.TxnAborted)
	st, msg, _ = txn2pc(t, s, hdr{"txn_id": "18446744073709551616", "txn_operation": "abort"})
	wantEq(t, "overflow status", st, "INTERNAL_ERROR")
	wantEq(t, "overflow", msg, "convert txn_id [18446744073709551616] failed, reason=stoull")
}

// A client that disconnects mid-body: free_handler_ctx cancels the pipe
// ("sender is gone"), the fragment fails and the BE rolls the txn back, so a
// crashed loader's load never lingers in PREPARE.
func TestStreamLoad_ClientDisconnectMidBody_RollsBack_1_5(t *testing.T) {
	t.Parallel()
	for _, twoPC := range []string{"true", "false"} {
		s := newServer(t)
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.BEURL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		label := "gone-" + twoPC
		// The BE has begun the txn once it reads the body; wait for that by
		// observing the stream fault point, then vanish.
		h, err := s.Fault(Fault{Op: FaultStream, Label: label, Observe: true})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "PUT /api/demo/orders/_stream_load HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: %s\r\n"+
			"label: %s\r\ntwo_phase_commit: %s\r\nContent-Length: 1000\r\n\r\n1\ta\n2\tb\n", basic("root", ""), label, twoPC)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := h.Wait(ctx, 1); err != nil {
			cancel()
			t.Fatal(err)
		}
		cancel()
		_ = conn.Close()
		s.Close() // waits for the handler to finish
		tx, err := s.TxnByLabel(testDB, label)
		if err != nil {
			t.Fatal(err)
		}
		wantEq(t, "state "+twoPC, tx.Status, doris.TxnAborted)
		wantEq(t, "reason "+twoPC, tx.Reason, "[INTERNAL_ERROR]cancelled: sender is gone")
		rows, _ := s.Rows(testDB, "orders")
		wantEq(t, "rows", len(rows), 0)
	}
}

// TransactionState.isExpired uses whole seconds: (now-finish)/1000 > keep.
func TestLabels_RetentionWholeSeconds_4(t *testing.T) {
	t.Parallel()
	clk := NewManualClock(time.Time{})
	s := newServer(t, WithClock(clk))
	load(t, s, "orders", "1\ta\n", hdr{"label": "w"})
	clk.Advance(43200*time.Second + 999*time.Millisecond)
	wantEq(t, "at 43200.999 s", s.LabelState(testDB, "w"), doris.TxnVisible)
	clk.Advance(time.Millisecond)
	wantEq(t, "at 43201 s", s.LabelState(testDB, "w"), doris.TxnUnknown)
}

// rapidjson Writer / Jackson escaping: short escapes, \u00XX upper-case for
// other control bytes, nothing else escaped.
func TestJSON_StringEscaping_2_1(t *testing.T) {
	t.Parallel()
	got := string(prettyJSON([]field{{"k", "a\"b\\c\td\n\x01\x1f<&>/\u2028é"}}))
	want := "{\n    \"k\": \"a\\\"b\\\\c\\td\\n\\u0001\\u001F<&>/\u2028é\"\n}"
	wantEq(t, "pretty", got, want)
	s := newServer(t)
	_, raw := load(t, s, "orders", "1\ta\n", hdr{"label": "c", "comment": "x\ty\"z"})
	if !strings.Contains(raw, "\n    \"Comment\": \"x\\ty\\\"z\",\n") {
		t.Fatalf("Comment escaping: %s", raw)
	}
}

// Only a failed fragment zeroes NumberLoadedRows (stream_load_executor.cpp);
// a precommit that fails because the txn was aborted meanwhile keeps it.
func TestStreamLoad_PrecommitFailureKeepsLoadedRows_8(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h, err := s.Fault(Fault{Op: FaultPrecommit, Label: "race", Block: true})
	if err != nil {
		t.Fatal(err)
	}
	done := putAsync(s.BEURL()+"/api/demo/orders/_stream_load", hdr{"label": "race", "two_phase_commit": "true"}, "1\ta\n2\tb\n")
	if err := h.Wait(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	st, _, _ := txn2pc(t, s, hdr{"label": "race", "txn_operation": "abort"}) // PREPARE is abortable by label
	wantEq(t, "abort", st, "Success")
	h.Release()
	m := <-done
	if m == nil {
		t.Fatal("no response")
	}
	wantEq(t, "Status", m["Status"], any("Fail"))
	wantEq(t, "NumberLoadedRows", m["NumberLoadedRows"], any(float64(2)))
	wantEq(t, "state", s.LabelState(testDB, "race"), doris.TxnAborted)
}
