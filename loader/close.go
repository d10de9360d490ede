package loader

import (
	"context"
	"errors"
	"fmt"
)

// Close finishes the pending background commit, sweeps zombie txns (see
// Sweep; only when the loader is usable and the commit succeeded), aborts
// the open checkpoint's load (its rows are not loaded: the caller resumes
// from the last position), and releases the store and ledger. After a crash
// failpoint it only waits for the loader's goroutines to stop and returns
// ErrCrashed. Close is idempotent.
func (l *Loader) Close(ctx context.Context) error {
	if l.closed {
		return nil
	}
	healthy := l.usable() == nil
	l.closed = true
	if l.crashed.Load() {
		l.wg.Wait()
		return ErrCrashed
	}
	var errs []error
	if pc := l.pending; pc != nil {
		select {
		case <-pc.done:
			if pc.err != nil {
				errs = append(errs, fmt.Errorf("commit of checkpoint %d: %w", pc.d.ID, pc.err))
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("close: waiting for the commit of checkpoint %d: %w", pc.d.ID, ctx.Err()))
		}
		l.pending = nil
	}
	if l.crashed.Load() {
		l.wg.Wait()
		return ErrCrashed
	}
	if healthy && len(errs) == 0 && !l.crashed.Load() {
		// The last checkpoint boundary of a healthy loader (a drain ends
		// here): sweep whatever the interval, so that a zombie's txn does
		// not outlive the job's stop.
		_ = l.sweep(ctx, "close") // logged by sweep
	}
	if a := l.cur; a != nil && a.open() {
		if err := l.abandonLoads(ctx, a, "close"); err != nil {
			errs = append(errs, fmt.Errorf("close: abort open checkpoint %d: %w", a.id, err))
		}
	}
	l.end()
	l.wg.Wait()
	l.smu.Lock()
	l.storeDead = true
	l.smu.Unlock()
	if err := l.cfg.Store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	if l.ledger != nil {
		if err := l.ledger.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close ledger: %w", err))
		}
	}
	return errors.Join(errs...)
}
