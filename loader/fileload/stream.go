package fileload

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader"
)

// stream runs the round's workers at once, each one 2PC Stream Load of
// its pieces, and returns their precommitted txns in worker order. The
// first failure cancels the others; the error names the worker's label.
func (r *run) stream(ctx context.Context, rd *Round, labels []string) ([]Txn, error) {
	if err := r.fire(ctx, loader.FailAfterAnnounce); err != nil {
		return nil, err
	}
	r.firstPrecommit.Store(nil)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-r.abandon: // a crash: cancel every in-flight load, like a killed process
			cancel(loader.ErrCrashed)
		case <-ctx.Done():
		}
	}()
	txns := make([]Txn, len(rd.Workers))
	errs := make([]error, len(rd.Workers))
	var wg sync.WaitGroup
	for w := range rd.Workers {
		wg.Go(func() {
			t, err := r.worker(ctx, w, labels[w], rd.Workers[w])
			if err != nil {
				errs[w] = err
				if r.crashed(err) {
					cancel(err)
				} else {
					cancel(fmt.Errorf("worker %d (label %s) failed: %w", w, labels[w], err))
				}
				return
			}
			txns[w] = t
		})
	}
	wg.Wait()
	if r.dying.Load() {
		return nil, fmt.Errorf("file load into %s: %w", r.table(), loader.ErrCrashed)
	}
	// Report the failure that cancelled the others, not the cancellations.
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return nil, fmt.Errorf("file load into %s: %w", r.table(), cause)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("file load into %s: %w", r.table(), err)
	}
	return txns, nil
}

// worker streams pieces into one 2PC Stream Load labelled lbl.
func (r *run) worker(ctx context.Context, w int, lbl string, pieces []Piece) (Txn, error) {
	o := r.o
	req := doris.LoadRequest{DB: o.DB, Table: o.Table, Label: lbl, Format: o.Format, TwoPhaseCommit: true,
		ReadJSONByLine: o.Format == "json", Headers: o.Headers, Compression: o.Compression}
	b := newBody(ctx, r.st.Files, pieces, o.Progress, func() error { return r.fire(ctx, loader.FailMidStream) })
	res, err := o.Client.StreamLoad(ctx, req, b)
	b.close()
	if r.dying.Load() {
		return Txn{}, loader.ErrCrashed
	}
	if err != nil {
		return Txn{}, fmt.Errorf("stream load label %s (%s): %w", lbl, describePieces(r.st.Files, pieces), err)
	}
	if res.TxnID <= 0 || res.TwoPhaseCommit != "true" {
		return Txn{}, fmt.Errorf("stream load label %s: Doris answered %s without a precommitted txn (TxnId %d, "+
			"TwoPhaseCommit %q)", lbl, res.Status, res.TxnID, res.TwoPhaseCommit)
	}
	now := o.Now()
	r.firstPrecommit.CompareAndSwap(nil, &now)
	if err := r.fire(ctx, loader.FailAfterPrecommit); err != nil {
		return Txn{}, err
	}
	o.Logger.Debug("file load: worker precommitted", "label", lbl, "txn_id", res.TxnID, "rows", res.NumberLoadedRows)
	return Txn{Worker: w, Label: lbl, TxnID: res.TxnID, Rows: res.NumberLoadedRows, Bytes: b.sent, Pieces: pieces,
		Filtered: res.NumberFilteredRows}, nil
}
