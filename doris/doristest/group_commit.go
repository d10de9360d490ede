package doristest

// Behavior: the group_commit Stream Load header (docs/doris-facts.md §9, §12), from
// BE be/src/service/http/action/stream_load.cpp _handle_group_commit /
// _can_group_commit and be/src/load/stream_load/stream_load_context.cpp
// to_json, plus the group commit manual (DOC-GC):
//   - A non-empty value other than off_mode, sync_mode, async_mode (any case)
//     fails at once, before Basic auth: "[INVALID_ARGUMENT]group_commit can
//     only be [async_mode, sync_mode, off_mode]" (TxnId -1).
//   - off_mode, or no header, is a normal load. (Without the header real
//     Doris lets the table property group_commit_mode decide; the emulator
//     has no such property, so no header means no group commit.)
//   - sync_mode / async_mode: a body with Content-Length 0 and no chunked
//     transfer is a normal load. A chunked body clears the client's label
//     first. Then two_phase_commit: true, partial_columns: true,
//     partitions, temporary_partitions or unique_key_update_mode
//     UPDATE_FIXED_COLUMNS / UPDATE_FLEXIBLE_COLUMNS make it a normal load
//     (the label kept, or a UUID when the chunked rule cleared it). Otherwise
//     a label fails: "[INVALID_ARGUMENT]label and group_commit can't be set
//     at the same time" (TxnId -1).
//   - A group-commit load begins no txn of its own: it joins the table's open
//     internal load, whose label is group_commit_<hi>_<lo> (group_commit_mgr:
//     "group_commit_" + load id with '-' → '_') and whose txn id is the
//     reply's TxnId; many loads share one. The reply has "GroupCommit": true
//     instead of "TwoPhaseCommit", and no BeginTxnTimeMs or
//     CommitAndPublishTimeMs.
//   - sync_mode answers after the internal load committed: rows are visible
//     at the reply. async_mode answers once the rows are in the WAL: they
//     become visible when the internal load commits, group_commit_interval_ms
//     (table property, default 10000) after it opened on the emulator's
//     clock, or at once when it holds group_commit_data_bytes (table
//     property, default 64 MiB). Like every emulator timer this is evaluated
//     lazily (cleaner.go), so a test advances a ManualClock and reads.
//   - Password, database and table are checked as for begin_txn (the FE
//     plans the load); the filter ratio applies to each load. The begin and
//     stream faults fire as for any load; precommit and commit faults do not
//     (the client's load commits nothing itself).

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/table"
)

// Group commit modes (the header values, lower-cased).
const (
	groupCommitOff   = "off_mode"
	groupCommitSync  = "sync_mode"
	groupCommitAsync = "async_mode"
)

// Table properties of the group commit manual, with their defaults.
const (
	propGroupCommitInterval  = "group_commit_interval_ms"
	propGroupCommitDataBytes = "group_commit_data_bytes"
	defGroupCommitIntervalMs = 10000
	defGroupCommitDataBytes  = 64 << 20
)

// groupCommitDecision is _handle_group_commit: it returns the mode ("" for a
// normal load) and may clear *label (chunked body). A non-empty msg fails the
// load before anything else.
func groupCommitDecision(r *http.Request, twoPC bool, label *string) (mode, msg string) {
	h := strings.ToLower(r.Header.Get("group_commit"))
	switch h {
	case "", groupCommitOff:
		return "", ""
	case groupCommitSync, groupCommitAsync:
	default:
		return "", "[" + codeInvalidArg + "]group_commit can only be [async_mode, sync_mode, off_mode]"
	}
	var length int64
	if v := r.Header.Get("Content-Length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", fmt.Sprintf("[%s]invalid HTTP header CONTENT_LENGTH=%s: stoll", codeInvalidArg, v)
		}
		length = n
	}
	chunked := slices.Contains(r.TransferEncoding, "chunked")
	if length == 0 && !chunked {
		return "", ""
	}
	if chunked {
		*label = ""
	}
	updateMode := strings.ToUpper(r.Header.Get("unique_key_update_mode"))
	if strings.EqualFold(r.Header.Get("partial_columns"), "true") || r.Header.Get("partitions") != "" ||
		r.Header.Get("temporary_partitions") != "" || twoPC ||
		updateMode == "UPDATE_FIXED_COLUMNS" || updateMode == "UPDATE_FLEXIBLE_COLUMNS" {
		return "", ""
	}
	if *label != "" {
		return "", "[" + codeInvalidArg + "]label and group_commit can't be set at the same time"
	}
	return h, ""
}

// groupCommitLabel is group_commit_mgr's label for an internal load.
func groupCommitLabel() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("group_commit_%x_%x", binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]))
}

// groupCommitGroup is a table's open internal group-commit load.
type groupCommitGroup struct {
	txn      *txn
	opened   time.Time
	interval time.Duration
	maxBytes int64
	bytes    int64
}

// checkGroupCommitLocked checks a group-commit load like begin_txn does
// (password, db, table) and returns the table.
func (s *Server) checkGroupCommitLocked(req beginReq) (*tableEntry, *feError) {
	if msg := s.accessDeniedLocked(req.user, req.password, req.clientIP); msg != "" {
		return nil, analysisErr("%s", msg)
	}
	d, ok := s.dbs[req.db]
	if !ok {
		return nil, unknownDBErr(req.db)
	}
	te, ok := d.tables[req.table]
	if !ok {
		return nil, &feError{code: codeNotFound, errCode: errCodeMetaNotFound, msg: "table not found, tableName=" + req.table}
	}
	return te, nil
}

// finishGroupCommit adds a parsed load to its table's open internal load
// (opening one when needed) and fills the reply.
func (s *Server) finishGroupCommit(req beginReq, te *tableEntry, mode string, b *table.Batch, res *loadResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[req.db]
	if d == nil || d.tables[req.table] != te {
		// Dropped (or re-created) while the body streamed: the internal
		// load's commit resolves the table by id (queryLoadCommitTables).
		res.Status, res.LoadedRows = statusFail, 0
		res.Message = fmt.Sprintf("[%s]TStatus: errCode = 7, detailMessage = unknown table, table_id=%d", codeAnalysis, te.id)
		return
	}
	g := d.txns.groups[te.id]
	if g == nil || g.txn.status != doris.TxnPrepare {
		g = s.openGroupLocked(d, req.table, te)
	}
	res.TxnID, res.Label = g.txn.id, g.txn.label
	s.addGroupCommitLocked(g, mode, b)
	res.Status, res.Message = statusSuccess, "OK"
}

// openGroupLocked opens a table's internal group-commit load: a txn with a
// group_commit_ label, PREPARE until the group commits.
func (s *Server) openGroupLocked(d *database, name string, te *tableEntry) *groupCommitGroup {
	now := s.clock.Now()
	s.nextTxnID++
	t := &txn{
		id:               s.nextTxnID,
		db:               d,
		table:            name,
		tableID:          te.id,
		label:            groupCommitLabel(),
		status:           doris.TxnPrepare,
		coordinator:      "BE: " + beHost,
		prepareTime:      now,
		timeout:          time.Duration(s.feConf(ConfStreamLoadDefaultTimeout)) * time.Second,
		precommitTimeout: time.Duration(s.feConf(ConfPrecommitTimeout)) * time.Second,
		tbl:              te.data,
	}
	d.txns.byID[t.id] = t
	d.txns.byLabel[t.label] = append(d.txns.byLabel[t.label], t)
	g := &groupCommitGroup{
		txn:      t,
		opened:   now,
		interval: time.Duration(tableProp(te, propGroupCommitInterval, defGroupCommitIntervalMs)) * time.Millisecond,
		maxBytes: tableProp(te, propGroupCommitDataBytes, defGroupCommitDataBytes),
	}
	d.txns.groups[te.id] = g
	return g
}

func tableProp(te *tableEntry, key string, def int64) int64 {
	if te.schema() == nil {
		return def
	}
	if v, err := strconv.ParseInt(te.schema().Properties[key], 10, 64); err == nil && v > 0 {
		return v
	}
	return def
}

// addGroupCommitLocked stages a load's batch in its group; sync_mode (or a
// full group) commits the internal load now.
func (s *Server) addGroupCommitLocked(g *groupCommitGroup, mode string, b *table.Batch) {
	if b != nil {
		g.txn.groupBatches = append(g.txn.groupBatches, b)
		g.bytes += b.LoadBytes
	}
	if mode == groupCommitSync || g.bytes >= g.maxBytes {
		s.commitGroupLocked(g)
	}
}

// commitGroupLocked commits and publishes an internal load (publish may be
// held, see SetHoldPublish) and closes the group.
func (s *Server) commitGroupLocked(g *groupCommitGroup) {
	t := g.txn
	if g2 := t.db.txns.groups[t.tableID]; g2 == g {
		delete(t.db.txns.groups, t.tableID)
	}
	if t.status != doris.TxnPrepare {
		return
	}
	s.commitLocked(t)
}

// flushGroupCommitsLocked commits every internal load whose interval passed.
func (s *Server) flushGroupCommitsLocked(now time.Time) {
	for _, d := range s.dbs {
		for _, g := range d.txns.groups {
			if now.Sub(g.opened) >= g.interval {
				s.commitGroupLocked(g)
			}
		}
	}
}
