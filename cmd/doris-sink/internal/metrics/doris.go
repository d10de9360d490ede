package metrics

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

// WrapDoris returns d observed for table ("db.table"): Stream Loads count
// rows, bytes and precommits and time the begin/stream/precommit stages;
// 2PC commits and aborts count outcomes and are timed. Behaviour is
// unchanged: every call and error passes through.
func (m *Metrics) WrapDoris(d loader.Doris, table string) loader.Doris {
	return &observedDoris{d: d, m: m, table: table, rows: map[int64]int64{}}
}

type observedDoris struct {
	d     loader.Doris
	m     *Metrics
	table string

	mu   sync.Mutex
	rows map[int64]int64 // precommitted txn id → rows, until commit/abort
}

var _ loader.Doris = (*observedDoris)(nil)

func (o *observedDoris) stage(stage string, d time.Duration) {
	o.m.stages.WithLabelValues(o.table, stage).Observe(d.Seconds())
}

func (o *observedDoris) txn(kind string) { o.m.txns.WithLabelValues(o.table, kind).Inc() }

// StreamLoad passes the load through and records its result.
func (o *observedDoris) StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error) {
	t0 := time.Now()
	res, err := o.d.StreamLoad(ctx, req, body)
	o.stage(StageStream, time.Since(t0))
	if err != nil || res == nil || !res.Succeeded() {
		o.txn(TxnLoadFailed)
		return res, err
	}
	o.stage(StageBegin, time.Duration(res.BeginTxnTimeMs)*time.Millisecond)
	o.stage(StagePrecommit, time.Duration(res.CommitAndPublishTimeMs)*time.Millisecond)
	o.m.rows.WithLabelValues(o.table).Add(float64(res.NumberLoadedRows))
	o.m.bytes.WithLabelValues(o.table).Add(float64(res.LoadBytes))
	if res.TwoPhaseCommit == "true" {
		o.txn(TxnPrecommitted)
		o.mu.Lock()
		o.rows[res.TxnID] = res.NumberLoadedRows
		o.mu.Unlock()
	} else {
		o.txn(TxnLoaded)
		o.m.rowsCommit.WithLabelValues(o.table).Add(float64(res.NumberLoadedRows))
	}
	return res, err
}

// CommitTxn passes the commit through and counts its outcome.
func (o *observedDoris) CommitTxn(ctx context.Context, db string, txnID int64) error {
	t0 := time.Now()
	err := o.d.CommitTxn(ctx, db, txnID)
	o.stage(StageCommit, time.Since(t0))
	switch {
	case err == nil:
		o.txn(TxnCommitted)
		o.mu.Lock()
		n, ok := o.rows[txnID]
		delete(o.rows, txnID)
		o.mu.Unlock()
		if ok {
			o.m.rowsCommit.WithLabelValues(o.table).Add(float64(n))
		}
	case doris.IsAmbiguous(err):
		o.txn(TxnCommitAmbiguous)
	default:
		o.txn(TxnCommitFailed)
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
	t0 := time.Now()
	err := call()
	o.stage(StageAbort, time.Since(t0))
	if err != nil {
		o.txn(TxnAbortFailed)
		return err
	}
	o.txn(TxnAborted)
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
