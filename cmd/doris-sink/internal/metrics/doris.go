package metrics

import (
	"context"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

// WrapDoris returns d observed for the job's table ("db.table"): Stream
// Loads count rows, bytes and precommits and time the begin/stream/
// precommit stages under the table they load (a routed job's loads count
// under their own table); 2PC commits and aborts count outcomes under the
// table of the txn's load (table when the txn was not loaded through d,
// e.g. an abort by label in recovery). Behaviour is unchanged: every call
// and error passes through.
func (m *Metrics) WrapDoris(d loader.Doris, table string) loader.Doris {
	return &observedDoris{d: d, m: m, table: table, rows: map[int64]txnRows{}}
}

// WrapSlotDoris is WrapDoris for the job of slot in group mode (NewGroup):
// its series carry slot="<slot>".
func (m *Metrics) WrapSlotDoris(d loader.Doris, table string, slot int) loader.Doris {
	return &observedDoris{d: d, m: m, table: table, slot: strconv.Itoa(slot), rows: map[int64]txnRows{}}
}

// txnRows is what a precommitted txn's load counted, until commit/abort.
type txnRows struct {
	table string
	rows  int64
}

type observedDoris struct {
	d     loader.Doris
	m     *Metrics
	table string
	slot  string // the slot label in group mode

	mu   sync.Mutex
	rows map[int64]txnRows // precommitted txn id → its table and rows, until commit/abort
}

var _ loader.Doris = (*observedDoris)(nil)

func (o *observedDoris) stage(table, stage string, d time.Duration) {
	o.m.stages.WithLabelValues(o.m.labels(table, o.slot, stage)...).Observe(d.Seconds())
}

func (o *observedDoris) txn(table, kind string) {
	o.m.txns.WithLabelValues(o.m.labels(table, o.slot, kind)...).Inc()
}

// loadTable is the "db.table" req loads, the job's table when req names none.
func (o *observedDoris) loadTable(req doris.LoadRequest) string {
	if req.DB == "" || req.Table == "" {
		return o.table
	}
	return req.DB + "." + req.Table
}

// txnTable is the table of txnID's load through o, the job's table when
// unknown.
func (o *observedDoris) txnTable(txnID int64) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.rows[txnID]; ok {
		return r.table
	}
	return o.table
}

// StreamLoad passes the load through and records its result.
func (o *observedDoris) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	table := o.loadTable(req)
	t0 := time.Now()
	res, err := o.d.StreamLoad(ctx, req, body)
	o.stage(table, StageStream, time.Since(t0))
	if err != nil || res == nil || !res.Succeeded() {
		o.txn(table, TxnLoadFailed)
		return res, err
	}
	o.stage(table, StageBegin, time.Duration(res.BeginTxnTimeMs)*time.Millisecond)
	o.stage(table, StagePrecommit, time.Duration(res.CommitAndPublishTimeMs)*time.Millisecond)
	o.m.rows.WithLabelValues(o.m.labels(table, o.slot)...).Add(float64(res.NumberLoadedRows))
	o.m.bytes.WithLabelValues(o.m.labels(table, o.slot)...).Add(float64(res.LoadBytes))
	if res.TwoPhaseCommit == "true" {
		o.txn(table, TxnPrecommitted)
		o.mu.Lock()
		o.rows[res.TxnID] = txnRows{table: table, rows: res.NumberLoadedRows}
		o.mu.Unlock()
	} else {
		o.txn(table, TxnLoaded)
		o.m.rowsCommit.WithLabelValues(o.m.labels(table, o.slot)...).Add(float64(res.NumberLoadedRows))
	}
	return res, err
}

// CommitTxn passes the commit through and counts its outcome.
func (o *observedDoris) CommitTxn(ctx context.Context, db string, txnID int64) error {
	table := o.txnTable(txnID)
	t0 := time.Now()
	err := o.d.CommitTxn(ctx, db, txnID)
	o.stage(table, StageCommit, time.Since(t0))
	switch {
	case err == nil:
		o.txn(table, TxnCommitted)
		o.mu.Lock()
		r, ok := o.rows[txnID]
		delete(o.rows, txnID)
		o.mu.Unlock()
		if ok {
			o.m.rowsCommit.WithLabelValues(o.m.labels(table, o.slot)...).Add(float64(r.rows))
		}
	case doris.IsAmbiguous(err):
		o.txn(table, TxnCommitAmbiguous)
	default:
		o.txn(table, TxnCommitFailed)
	}
	return err
}

// AbortTxn passes the abort through and counts its outcome.
func (o *observedDoris) AbortTxn(ctx context.Context, db string, txnID int64) error {
	return o.abort(func() error { return o.d.AbortTxn(ctx, db, txnID) }, txnID)
}

// AbortLabel passes the abort through and counts its outcome.
func (o *observedDoris) AbortLabel(ctx context.Context, db, label string) error {
	return o.abort(func() error { return o.d.AbortLabel(ctx, db, label) }, 0)
}

func (o *observedDoris) abort(call func() error, txnID int64) error {
	table := o.txnTable(txnID)
	t0 := time.Now()
	err := call()
	o.stage(table, StageAbort, time.Since(t0))
	if err != nil {
		o.txn(table, TxnAbortFailed)
		return err
	}
	o.txn(table, TxnAborted)
	if txnID != 0 {
		o.mu.Lock()
		delete(o.rows, txnID)
		o.mu.Unlock()
	}
	return nil
}

// LoadState passes through unobserved.
func (o *observedDoris) LoadState(ctx context.Context, db, label string) (doris.TxnStatus, error) {
	return o.d.LoadState(ctx, db, label)
}
