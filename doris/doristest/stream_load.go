package doristest

// Behavior: BE PUT /api/{db}/{table}/_stream_load (docs/doris-facts.md §1.4, §1.5,
// §2, §8), in the BE's order:
//  1. label, two_phase_commit (exactly "true") and group_commit
//     (group_commit.go; may clear the label or refuse the load) are read
//     first, so every reply carries them; an empty label of a non-group-commit
//     load becomes a UUID;
//  2. Basic auth present, else Fail "[NOT_AUTHORIZED]no valid Basic authorization";
//  3. format and compress_type (compress.go), else "[DATA_FILE_TYPE_ERROR]unknown
//     data format, format=<x>"; column_separator / line_delimiter are
//     unescaped in step 7 (internal/table/separators.go);
//  4. Content-Length or chunked, else the content_length message;
//  5. timeout header must be an integer; comment is read;
//  6. fault "begin"; then begin_txn on the FE (txn.go: password, db, table,
//     timeout range, label regex, label conflict → "Label Already Exists"
//     with ExistingJobStatus, running-txn quota).
//     Errors up to here are answered without reading the body, TxnId -1.
//  7. load headers via table.ParseLoadSpec; error → Fail, txn ABORTED,
//     body not read;
//     A group-commit load begins no txn: it checks password, db and table,
//     and joins the table's internal load after step 9 (group_commit.go).
//  8. body via table.Prepare (fault "stream" fires mid-body), decompressed
//     as it streams when compress_type is set; error → Fail,
//     txn ABORTED; a client that disconnects mid-body → txn ABORTED
//     "[INTERNAL_ERROR]cancelled: sender is gone";
//  9. filter ratio: filtered / (total − unselected) > max_filter_ratio →
//     "[DATA_QUALITY_ERROR]too many filtered rows", NumberLoadedRows 0,
//     ErrorURL, txn ABORTED. Filtered rows within the ratio still get an
//     ErrorURL;
// 10. 2PC: fault "precommit", PREPARE → PRECOMMITTED, CommitAndPublishTimeMs 0;
//     a failed precommit/commit (txn aborted meanwhile) is Fail with
//     NumberLoadedRows kept (only a failed fragment zeroes it);
//     else fault "commit", COMMITTED → VISIBLE (data applied), or
//     "Publish Timeout" while publishing is held.
// HTTP status is always 200; the body is the §2.1 JSON (load_result.go).
// A txn aborted meanwhile (timeout, user abort) fails the load with the FE's
// message.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris/doristest/internal/table"
)

var errInjected = errors.New("injected stream fault")

// reasonSenderGone is the rollback reason when the client disconnects
// mid-body: StreamLoadAction::free_handler_ctx cancels the pipe with "sender
// is gone" and StreamLoadPipe reads fail with InternalError("cancelled: {}")
// (docs/doris-facts.md §1.5; stream_load.cpp, stream_load_pipe.cpp).
const reasonSenderGone = "[" + codeInternal + "]cancelled: sender is gone"

func (s *Server) beStreamLoad(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.RunCleaner()
	db, tbl := r.PathValue("db"), r.PathValue("table")
	res := &loadResult{TxnID: -1, Label: r.Header.Get("label"), TwoPhaseCommit: r.Header.Get("two_phase_commit") == "true"}
	gcMode, gcMsg := groupCommitDecision(r, res.TwoPhaseCommit, &res.Label) // group_commit.go
	res.GroupCommit = gcMode != ""
	if res.Label == "" && !res.GroupCommit {
		res.Label = newUUID()
	}
	reply := func() {
		res.LoadTimeMs = time.Since(start).Milliseconds()
		writeBEJSON(w, res.json())
	}
	fail := func(msg string) {
		res.Status, res.Message, res.LoadedRows = statusFail, msg, 0
		reply()
	}

	if gcMsg != "" {
		fail(gcMsg)
		return
	}
	user, password, ok := basicAuth(r)
	if !ok {
		fail("[" + codeNotAuth + "]no valid Basic authorization")
		return
	}
	format := strings.ToLower(r.Header.Get("format"))
	switch format {
	case "", "csv", "csv_with_names", "csv_with_names_and_types", "json", "parquet", "orc", "arrow":
	default:
		fail(fmt.Sprintf("[%s]unknown data format, format=%s", codeFileType, r.Header.Get("format")))
		return
	}
	// compress.go: an unknown compress_type leaves a CSV format UNKNOWN.
	ctype, ctypeNotEmulated, ok := parseCompressType(format, r.Header.Get("compress_type"))
	if !ok {
		fail(fmt.Sprintf("[%s]unknown data format, format=%s", codeFileType, r.Header.Get("format")))
		return
	}
	if r.Header.Get("Content-Length") == "" && !slices.Contains(r.TransferEncoding, "chunked") {
		fail("[" + codeInvalidArg + "]content_length is empty and transfer-encoding!=chunked, please set content_length or transfer-encoding=chunked")
		return
	}
	req := beginReq{user: user, password: password, clientIP: clientIP(r), db: db, table: tbl, label: res.Label}
	if v := r.Header.Get("timeout"); v != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			fail("[" + codeInvalidArg + "]Invalid timeout format")
			return
		}
		req.timeoutSec, req.timeoutSet = n, true
	}
	res.Comment = r.Header.Get("comment")

	act := s.fault(r.Context(), FaultBegin, db, tbl, res.Label)
	if act != nil && act.refuse {
		dropConn(w)
		return
	}
	if act != nil && act.err != nil {
		res.Status, res.Message = orDefault(act.err.Status, statusFail), act.err.Message
		reply()
		return
	}

	beginStart := time.Now()
	s.mu.Lock()
	var t *txn // nil for a group-commit load: it joins an internal load at the end
	var data *table.Table
	var gcTable *tableEntry
	var ferr *feError
	if res.GroupCommit {
		if gcTable, ferr = s.checkGroupCommitLocked(req); ferr == nil {
			data = gcTable.data
		}
	} else if t, ferr = s.beginLocked(req); ferr == nil {
		data = t.tbl
	}
	s.mu.Unlock()
	res.BeginTxnTimeMs = time.Since(beginStart).Milliseconds()
	if ferr != nil {
		if ferr.code == codeLabelExists {
			res.Status, res.ExistingJobStatus, res.Message = statusLabelExists, existingJobStatus(ferr.existing), ferr.beMessage()
			reply()
			return
		}
		fail(ferr.beMessage())
		return
	}
	if t != nil {
		res.TxnID = t.id
	}
	if act != nil && act.applyThenDrop {
		dropConn(w)
		return
	}

	putStart := time.Now()
	spec, err := table.ParseLoadSpec(r.Header)
	res.StreamLoadPutTimeMs = time.Since(putStart).Milliseconds()
	if err != nil {
		msg := loadErrMessage(err)
		s.rollback(t, msg)
		fail(msg)
		return
	}

	if spec.PartialColumns && t != nil {
		s.mu.Lock()
		s.planPartialLocked(t)
		s.mu.Unlock()
	}

	if ctypeNotEmulated != "" {
		msg := fmt.Sprintf("[%s]doristest: compress_type %s is accepted by Doris but not emulated", codeInternal, ctypeNotEmulated)
		s.rollback(t, msg)
		fail(msg)
		return
	}

	readStart := time.Now()
	fr := &faultReader{s: s, ctx: r.Context(), r: r.Body, db: db, tbl: tbl, label: res.Label}
	var body io.Reader = fr
	var dr *decompressReader
	if ctype != compressPlain {
		dr = newDecompressReader(ctype, fr)
		body = dr
	}
	batch, err := data.Prepare(spec, body)
	res.ReadDataTimeMs = time.Since(readStart).Milliseconds()
	res.ReceiveDataTimeMs, res.WriteDataTimeMs = res.ReadDataTimeMs, res.ReadDataTimeMs
	if fr.act != nil {
		if fr.act.err == nil { // Refuse or ApplyThenDrop: the connection breaks mid-body
			s.rollback(t, reasonSenderGone)
			dropConn(w)
			return
		}
		msg := fr.act.err.Message
		s.rollback(t, msg)
		res.Status, res.Message = orDefault(fr.act.err.Status, statusFail), msg
		reply()
		return
	}
	if fr.readErr != nil {
		// The client went away mid-body: the BE cancels the pipe ("sender is
		// gone"), the fragment fails and _send_reply rolls the txn back.
		s.rollback(t, reasonSenderGone)
		fail(reasonSenderGone)
		return
	}
	if dr != nil && dr.err != nil {
		// A corrupt compressed body fails the fragment (decompressor.cpp).
		msg := "[" + codeInternal + "]" + dr.err.Error()
		s.rollback(t, msg)
		fail(msg)
		return
	}
	if batch != nil {
		res.TotalRows, res.FilteredRows, res.UnselectedRows = batch.TotalRows, batch.FilteredRows, batch.UnselectedRows
		res.LoadedRows, res.LoadBytes, res.FirstErrorMsg = batch.LoadedRows(), batch.LoadBytes, batch.FirstErrorMsg
		if dr != nil {
			res.LoadBytes = fr.n // ctx->receive_bytes: the compressed size
		}
		if batch.FilteredRows > 0 && len(batch.ErrorLines) > 0 {
			res.ErrorURL = s.storeErrorLog(res.Label, batch.ErrorLines)
		}
	}
	if err != nil {
		msg := loadErrMessage(err)
		s.rollback(t, msg)
		fail(msg)
		return
	}
	if sel := batch.TotalRows - batch.UnselectedRows; sel > 0 && float64(batch.FilteredRows)/float64(sel) > spec.MaxFilterRatio {
		msg := "[" + codeDataQuality + "]too many filtered rows"
		s.rollback(t, msg)
		fail(msg)
		return
	}

	if res.GroupCommit {
		s.finishGroupCommit(req, gcTable, gcMode, batch, res)
		reply()
		return
	}

	op := FaultCommit
	if res.TwoPhaseCommit {
		op = FaultPrecommit
	}
	act = s.fault(r.Context(), op, db, tbl, res.Label)
	if act != nil && act.refuse {
		dropConn(w) // txn left PREPARE, as if the BE died here
		return
	}
	if act != nil && act.err != nil {
		s.rollback(t, act.err.Message)
		res.Status, res.Message, res.LoadedRows = orDefault(act.err.Status, statusFail), act.err.Message, 0
		reply()
		return
	}
	commitStart := time.Now()
	s.mu.Lock()
	visible := false
	if res.TwoPhaseCommit {
		ferr = s.precommitLocked(t, batch)
	} else {
		visible, ferr = s.commitLoadLocked(t, batch)
	}
	if ferr != nil {
		s.abortLocked(t, ferr.beMessage())
	}
	s.mu.Unlock()
	if ferr != nil {
		// Only a failed fragment zeroes NumberLoadedRows (stream_load_executor.cpp);
		// a failed precommit/commit keeps the count.
		res.Status, res.Message = statusFail, ferr.beMessage()
		reply()
		return
	}
	if !res.TwoPhaseCommit {
		res.CommitAndPublishTimeMs = time.Since(commitStart).Milliseconds()
	}
	if act != nil && act.applyThenDrop {
		dropConn(w)
		return
	}
	res.Status, res.Message = statusSuccess, "OK"
	if !res.TwoPhaseCommit && !visible {
		res.Status = statusPublishTimeout
		res.Message = "[" + codePublishTmout + "]TStatus: transaction commit successfully, BUT data will be visible later"
	}
	reply()
}

// rollback is the BE's rollback_txn after a failed load: the txn is ABORTED
// with the failure message as reason (a no-op when already final, or for a
// group-commit load, which has no txn of its own).
func (s *Server) rollback(t *txn, reason string) {
	if t == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.abortLocked(t, reason)
}

// loadErrMessage renders a table error as the Stream Load Message.
func loadErrMessage(err error) string {
	var te *table.Error
	if errors.As(err, &te) {
		return te.Message()
	}
	return "[" + codeInternal + "]" + err.Error()
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// faultReader wraps a load body and fires the "stream" fault once: after the
// first bytes have been read, or at the end of an empty body.
type faultReader struct {
	s              *Server
	ctx            context.Context
	r              io.Reader
	db, tbl, label string
	n              int64
	fired          bool
	act            *faultAction
	readErr        error // a transport error reading the body (client gone)
}

func (f *faultReader) Read(p []byte) (int, error) {
	if f.act != nil {
		return 0, errInjected
	}
	if !f.fired && f.n > 0 {
		if err := f.fire(); err != nil {
			return 0, err
		}
	}
	n, err := f.r.Read(p)
	f.n += int64(n)
	if err != nil && err != io.EOF {
		f.readErr = err
	}
	if err == io.EOF && !f.fired {
		if ferr := f.fire(); ferr != nil {
			return n, ferr
		}
	}
	return n, err
}

func (f *faultReader) fire() error {
	f.fired = true
	act := f.s.fault(f.ctx, FaultStream, f.db, f.tbl, f.label)
	if act == nil {
		return nil
	}
	f.act = act
	return errInjected
}
