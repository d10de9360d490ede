package doristest

// Behavior (docs/doris-facts.md §5, FE-DTM / FE-GTM / FE-TS):
//   - Txn ids increase monotonically per cluster (FirstTxnID, default 1000);
//     lookups by id are scoped to the db of the request (§3.3 step 3).
//   - begin checks, in FE order: password, db exists, table exists
//     (loadTxnBeginImpl, §2.4), timeout range, label regex (§4), label
//     conflict ignoring ABORTED txns (§2.3, §4), running-txn quota (§8).
//   - PREPARE → PRECOMMITTED (2PC precommit) → COMMITTED → VISIBLE;
//     PREPARE → COMMITTED → VISIBLE (non-2PC); PREPARE/PRECOMMITTED → ABORTED
//     on load failure, user abort ("User Abort") or timeout
//     ("timeout by txn manager"). COMMITTED never times out.
//   - Publish (COMMITTED → VISIBLE, applying the staged batch to the table)
//     happens at once unless publishing is held (SetHoldPublish).
//   - All state is owned by Server.mu; functions named *Locked need it held.

import (
	"fmt"
	"slices"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/doristest/internal/table"
	"github.com/doris-sink/doris-sink/doris/schema"
)

// Abort reasons (docs/doris-facts.md §3.3, §5).
const (
	reasonUserAbort = "User Abort"
	reasonTimeout   = "timeout by txn manager"
)

type txn struct {
	id          int64
	db          *database
	table       string
	tableID     int64 // catalog identity of the table (tableEntry.id): survives ALTER, changes on DROP+CREATE
	label       string
	status      doris.TxnStatus
	coordinator string

	prepareTime, precommitTime, commitTime, publishTime, finishTime time.Time
	commitSeq                                                       int64 // commit order, for publishing held txns

	timeout          time.Duration // PREPARE timeout (header or default)
	precommitTimeout time.Duration // captured at creation
	reason           string

	tbl   *table.Table
	batch *table.Batch
	// partialSchema is the table's schema when a partial-update load was
	// planned, and partialVersion its schema version (txn_schema.go); nil
	// for other loads.
	partialSchema  *schema.Table
	partialVersion int64
	// groupBatches are the loads an internal group-commit load collected
	// (group_commit.go), applied after batch at publish.
	groupBatches []*table.Batch
}

// txnDB is the per-database transaction manager (DatabaseTransactionMgr).
type txnDB struct {
	byID    map[int64]*txn
	byLabel map[string][]*txn           // ascending txn id
	groups  map[int64]*groupCommitGroup // open group-commit load by table id
}

func newTxnDB() *txnDB {
	return &txnDB{byID: map[int64]*txn{}, byLabel: map[string][]*txn{}, groups: map[int64]*groupCommitGroup{}}
}

// latest returns the label's latest txn (max id), or nil.
func (d *txnDB) latest(label string) *txn {
	ts := d.byLabel[label]
	if len(ts) == 0 {
		return nil
	}
	return ts[len(ts)-1]
}

func (d *txnDB) running() int {
	n := 0
	for _, t := range d.byID {
		if t.status.Running() {
			n++
		}
	}
	return n
}

func (d *txnDB) remove(t *txn) {
	delete(d.byID, t.id)
	ts := slices.DeleteFunc(d.byLabel[t.label], func(x *txn) bool { return x == t })
	if len(ts) == 0 {
		delete(d.byLabel, t.label)
	} else {
		d.byLabel[t.label] = ts
	}
}

type beginReq struct {
	user, password, clientIP string
	db, table, label         string
	timeoutSec               int64
	timeoutSet               bool // false: stream_load_default_timeout_second
	trusted                  bool // an INSERT of a MySQL session that already logged in
}

// beginLocked is FE loadTxnBegin (docs/doris-facts.md §1.5, §2.3, §4, §8).
func (s *Server) beginLocked(req beginReq) (*txn, *feError) {
	if msg := s.accessDeniedLocked(req.user, req.password, req.clientIP); msg != "" && !req.trusted {
		return nil, analysisErr("%s", msg)
	}
	if req.label == "" {
		return nil, analysisErr("empty label in begin request")
	}
	d, ok := s.dbs[req.db]
	if !ok {
		return nil, unknownDBErr(req.db)
	}
	te, ok := d.tables[req.table]
	if !ok {
		return nil, &feError{code: codeNotFound, errCode: errCodeMetaNotFound, msg: "table not found, tableName=" + req.table}
	}
	timeout := req.timeoutSec
	if !req.timeoutSet {
		timeout = s.feConf(ConfStreamLoadDefaultTimeout)
	}
	if lo, hi := s.feConf(ConfMinLoadTimeout), s.feConf(ConfMaxStreamLoadTimeout); timeout < lo || timeout > hi {
		return nil, analysisErr("Invalid timeout: %d. Timeout should between %d and %d seconds", timeout, lo, hi)
	}
	if err := s.checkLabelLocked(req.label); err != nil {
		return nil, err
	}
	for _, t := range d.txns.byLabel[req.label] {
		if t.status != doris.TxnAborted {
			return nil, &feError{
				code: codeLabelExists, errCode: errCodeInternal, existing: t.status,
				msg: fmt.Sprintf("Label [%s] has already been used, relate to txn [%d]", req.label, t.id),
			}
		}
	}
	if n, limit := d.txns.running(), s.feConf(ConfMaxRunningTxnPerDB); int64(n) >= limit {
		return nil, analysisErr("current running txns on db %d is %d, larger than limit %d", d.id, n, limit)
	}
	now := s.clock.Now()
	s.nextTxnID++
	t := &txn{
		id:               s.nextTxnID,
		db:               d,
		table:            req.table,
		tableID:          te.id,
		label:            req.label,
		status:           doris.TxnPrepare,
		coordinator:      "BE: " + beHost,
		prepareTime:      now,
		timeout:          time.Duration(timeout) * time.Second,
		precommitTimeout: time.Duration(s.feConf(ConfPrecommitTimeout)) * time.Second,
		tbl:              te.data,
	}
	d.txns.byID[t.id] = t
	d.txns.byLabel[t.label] = append(d.txns.byLabel[t.label], t)
	return t, nil
}

// precommitLocked is FE loadTxnPreCommit: PREPARE → PRECOMMITTED.
func (s *Server) precommitLocked(t *txn, b *table.Batch) *feError {
	if err := t.loadCommitTableLocked(); err != nil {
		return err
	}
	if err := s.checkStillPrepareLocked(t); err != nil {
		return err
	}
	t.status = doris.TxnPrecommitted
	t.precommitTime = s.clock.Now()
	t.batch = b
	return nil
}

// commitLoadLocked is FE loadTxnCommit for a non-2PC load: PREPARE →
// COMMITTED, then publish. It reports whether the txn became VISIBLE.
func (s *Server) commitLoadLocked(t *txn, b *table.Batch) (visible bool, err *feError) {
	if err := t.loadCommitTableLocked(); err != nil {
		return false, err
	}
	if err := s.checkStillPrepareLocked(t); err != nil {
		return false, err
	}
	if err := s.checkSchemaCompatibilityLocked(t); err != nil {
		return false, err
	}
	t.batch = b
	s.commitLocked(t)
	return t.status == doris.TxnVisible, nil
}

func (s *Server) checkStillPrepareLocked(t *txn) *feError {
	switch t.status {
	case doris.TxnPrepare:
		return nil
	case doris.TxnAborted:
		return analysisErr("transaction [%d] is already aborted. abort reason: %s", t.id, t.reason)
	default:
		return analysisErr("transaction [%d] is already %s", t.id, t.status)
	}
}

// tableExistsLocked reports whether the txn's table (by id, not by name)
// is still in its database.
func (t *txn) tableExistsLocked() bool { return t.db.tableByID(t.tableID) != nil }

// loadCommitTableLocked is FrontendServiceImpl.queryLoadCommitTables as
// loadTxnPreCommit and loadTxnCommit reach it: the BE sends the table id, and
// a dropped table fails with MetaNotFoundException("unknown table,
// table_id=<id>") (errCode 7, ANALYSIS_ERROR); the BE then rolls back.
func (t *txn) loadCommitTableLocked() *feError {
	if t.tableExistsLocked() {
		return nil
	}
	return &feError{code: codeAnalysis, errCode: errCodeMetaNotFound, msg: fmt.Sprintf("unknown table, table_id=%d", t.tableID)}
}

// commit2PCTableLocked is loadTxn2PCImpl's table step for "commit":
// Database.getTablesOnIdOrderOrThrowException ("unknown table, tableId=<id>",
// errCode 7). The txn stays PRECOMMITTED; an abort still works ("if table was
// dropped, stream load must can abort", getTablesOnIdOrderIfExist).
func (t *txn) commit2PCTableLocked() *feError {
	if t.tableExistsLocked() {
		return nil
	}
	return &feError{code: codeAnalysis, errCode: errCodeMetaNotFound, msg: fmt.Sprintf("unknown table, tableId=%d", t.tableID)}
}

// commit2PCLocked is DatabaseTransactionMgr.commitTransaction(is2PC=true),
// with the exact state messages of docs/doris-facts.md §3.3.
func (s *Server) commit2PCLocked(t *txn) *feError {
	switch t.status {
	case doris.TxnPrecommitted:
		if err := s.checkSchemaCompatibilityLocked(t); err != nil {
			return err // the txn stays PRECOMMITTED
		}
		s.commitLocked(t)
		return nil
	case doris.TxnAborted:
		return analysisErr("transaction [%d] is already aborted. abort reason: %s", t.id, t.reason)
	case doris.TxnVisible:
		return analysisErr("transaction [%d] is already visible, not pre-committed.", t.id)
	case doris.TxnCommitted:
		return analysisErr("transaction [%d] is already committed, not pre-committed.", t.id)
	default:
		return analysisErr("transaction [%d] is prepare, not pre-committed.", t.id)
	}
}

// abort2PCLocked is DatabaseTransactionMgr.abortTransaction2PC (§3.3).
func (s *Server) abort2PCLocked(t *txn, reason string) *feError {
	switch t.status {
	case doris.TxnPrepare, doris.TxnPrecommitted:
		s.abortLocked(t, reason)
		return nil
	case doris.TxnAborted:
		return analysisErr("transaction [%d] is already aborted, abort reason: %s", t.id, t.reason)
	default:
		return analysisErr("transaction [%d] is already %s, could not abort.", t.id, t.status)
	}
}

// commitLocked moves a txn to COMMITTED and publishes it unless held.
func (s *Server) commitLocked(t *txn) {
	t.status = doris.TxnCommitted
	t.commitTime = s.clock.Now()
	s.commitSeq++
	t.commitSeq = s.commitSeq
	if !s.holdPublish {
		s.publishLocked(t)
	}
}

// publishLocked is publish done: COMMITTED → VISIBLE, data applied. A batch
// whose table was dropped meanwhile (only possible with DROP TABLE FORCE in
// Doris) is discarded, never applied to the dropped table's rows.
func (s *Server) publishLocked(t *txn) {
	now := s.clock.Now()
	if t.batch != nil || len(t.groupBatches) > 0 {
		if t.tableExistsLocked() {
			if t.batch != nil {
				t.tbl.Apply(t.batch)
			}
			for _, b := range t.groupBatches {
				t.tbl.Apply(b)
			}
		}
		t.batch, t.groupBatches = nil, nil
	}
	t.status = doris.TxnVisible
	t.publishTime = now
	t.finishTime = now
}

// abortLocked rolls a running txn back.
func (s *Server) abortLocked(t *txn, reason string) {
	if t.status.Final() {
		return
	}
	t.status = doris.TxnAborted
	t.reason = reason
	t.finishTime = s.clock.Now()
	t.batch, t.groupBatches = nil, nil
}

// SetHoldPublish holds (true) or resumes (false) publishing. While held,
// committed txns stay COMMITTED and non-2PC loads answer "Publish Timeout"
// (docs/doris-facts.md §2.2). Resuming publishes every COMMITTED txn in commit order.
func (s *Server) SetHoldPublish(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdPublish = hold
	if hold {
		return
	}
	var pending []*txn
	for _, d := range s.dbs {
		for _, t := range d.txns.byID {
			if t.status == doris.TxnCommitted {
				pending = append(pending, t)
			}
		}
	}
	// Commit order, not commit time: a ManualClock gives many commits one time.
	slices.SortFunc(pending, func(a, b *txn) int { return cmpInt(a.commitSeq, b.commitSeq) })
	for _, t := range pending {
		s.publishLocked(t)
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// snapshot converts a txn to a SHOW TRANSACTION row (docs/doris-facts.md §6.2).
func (t *txn) snapshot() doris.Transaction {
	return doris.Transaction{
		ID:            t.id,
		Label:         t.label,
		Coordinator:   t.coordinator,
		Status:        t.status,
		SourceType:    "BACKEND_STREAMING",
		PrepareTime:   t.prepareTime,
		PreCommitTime: t.precommitTime,
		CommitTime:    t.commitTime,
		PublishTime:   t.publishTime,
		FinishTime:    t.finishTime,
		Reason:        t.reason,
		ListenerID:    -1,
		TimeoutMs:     t.timeout.Milliseconds(),
	}
}
