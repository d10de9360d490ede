package loader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/doris-sink/doris-sink/doris"
)

// txnOps commits and aborts transactions idempotently, resolving every
// ambiguous or surprising answer by looking the label up (docs/design.md §2:
// never "retry and hope"). Shared by Participant and Loader.
type txnOps struct {
	client Doris
	// inspect, when set, reads a txn's own state by id (SHOW TRANSACTION
	// WHERE ID) to settle an ambiguous commit.
	inspect TxnInspector
	retry   Retry
	clock   Clock
	log     *slog.Logger
	// beforeAttempt, when set, runs before each commit request; an error
	// counts as that attempt's failure (failpoints).
	beforeAttempt func(ctx context.Context, attempt int) error
	// afterApplied, when set, runs after Doris accepted a commit; an error
	// makes the answer count as lost (failpoint
	// after-commit-response-lost).
	afterApplied func(ctx context.Context) error
}

// outcome of one commit or abort attempt.
type outcome int

const (
	outDone outcome = iota + 1
	outAborted
	outRetry
	outFatal
)

// commit commits txnID (label lbl) of db until Doris says it is COMMITTED
// or VISIBLE (nil), ABORTED (*AbortedError), or Retry.MaxElapsed passed
// (an error naming label and txn id). Retrying is safe: a repeated commit
// answers "already committed" (docs/doris-facts.md §3.3).
func (o *txnOps) commit(ctx context.Context, db, lbl string, txnID int64) error {
	start := o.clock.Now()
	var last error
	for attempt := 1; ; attempt++ {
		var err error
		if o.beforeAttempt != nil {
			err = o.beforeAttempt(ctx, attempt)
		}
		if errors.Is(err, errCrash) {
			return err
		}
		if err == nil {
			err = o.client.CommitTxn(ctx, db, txnID)
			if err == nil && o.afterApplied != nil {
				if ferr := o.afterApplied(ctx); ferr != nil {
					if errors.Is(ferr, errCrash) {
						return ferr
					}
					err = &lostAnswerError{err: ferr}
				}
			}
		}
		out, reason, err := o.classifyCommit(ctx, db, lbl, txnID, err)
		switch out {
		case outDone:
			return nil
		case outAborted:
			return &AbortedError{Label: lbl, TxnID: txnID, Reason: reason}
		case outFatal:
			return fmt.Errorf("commit label %s txn %d: %w", lbl, txnID, err)
		}
		last = err
		o.log.Warn("commit failed, retrying", "label", lbl, "txn_id", txnID, "attempt", attempt, "err", err)
		if werr := o.wait(ctx, start, attempt); werr != nil {
			return fmt.Errorf("commit label %s txn %d: giving up after %d attempts: %w (last error: %v)",
				lbl, txnID, attempt, werr, last)
		}
	}
}

// lostAnswerError is an applied commit whose answer a failpoint discarded.
type lostAnswerError struct{ err error }

func (e *lostAnswerError) Error() string { return "commit answer lost: " + e.err.Error() }
func (e *lostAnswerError) Unwrap() error { return e.err }

func (o *txnOps) classifyCommit(ctx context.Context, db, lbl string, txnID int64, err error) (outcome, string, error) {
	var te *doris.TxnError
	errors.As(err, &te)
	switch {
	case err == nil, errors.Is(err, doris.ErrTxnAlreadyCommitted):
		return outDone, "", nil
	case errors.Is(err, doris.ErrTxnAlreadyAborted):
		reason := ""
		if te != nil {
			reason = te.Reason
		}
		return outAborted, reason, err
	case errors.Is(err, doris.ErrUnauthorized), errors.Is(err, doris.ErrNotFound):
		return outFatal, "", err
	case errors.Is(err, doris.ErrSchemaIncompatible):
		// A partial-update load whose table changed since it was planned
		// (docs/doris-facts.md §13): it stays PRECOMMITTED and can never
		// commit. Recover aborts it and heals the checkpoint.
		return outFatal, "", err
	case errors.Is(err, errCrash), ctx.Err() != nil:
		return outFatal, "", errors.Join(err, ctx.Err())
	}
	// Ambiguous (answer lost), not found, not precommitted, or anything
	// else. The txn's own state decides when SHOW TRANSACTION can read it
	// (docs/doris-facts.md §6.2); else the label's state, which is that of
	// the label's newest txn (§6.1): it may be another txn of the label
	// (docs/design.md §2, identity checks), so a committed label is never
	// taken for this txn's commit on its own.
	if o.inspect != nil && !errors.Is(err, doris.ErrTxnNotFound) {
		if out, reason, ierr, ok := o.classifyByID(ctx, db, lbl, txnID, err); ok {
			return out, reason, ierr
		}
	}
	st, lerr := o.client.LoadState(ctx, db, lbl)
	if lerr != nil {
		return outRetry, "", fmt.Errorf("%w; label lookup: %v", err, lerr)
	}
	if errors.Is(err, doris.ErrTxnNotFound) {
		// A definite answer (docs/doris-facts.md §3.3 step 3): the txn id is gone
		// from the db (cleaned after it ended, §4) or never existed. Its
		// label is cleaned with it, so a label still known belongs to
		// another txn.
		switch st {
		case doris.TxnUnknown:
			return outFatal, "", fmt.Errorf("%w: the label is unknown too (expired after streaming_label_keep_max_second "+
				"or label_num_threshold, or never used): Doris cannot tell whether its rows are visible", err)
		case doris.TxnVisible, doris.TxnCommitted:
			return outFatal, "", &IdentityError{Label: lbl, DecidedTxnID: txnID, FoundState: st}
		case doris.TxnAborted:
			return outAborted, "not found by id, label found ABORTED", err
		}
		return outFatal, "", fmt.Errorf("%w: the label is held by another txn (%s)", err, st)
	}
	switch st {
	case doris.TxnAborted:
		// The label's newest txn is ABORTED: no txn of the label is live
		// (a live one would have refused every later begin of the
		// label, §4), so this one is aborted too.
		return outAborted, "found ABORTED by label lookup", err
	case doris.TxnVisible, doris.TxnCommitted:
		// Committed, by this txn or by another of its label: commit again
		// by id, which answers "already committed" only for this one.
		return outRetry, "", fmt.Errorf("%w (label is %s; committing again by txn id to tell whether by this txn)", err, st)
	}
	return outRetry, "", fmt.Errorf("%w (label is %s)", err, st)
}

// classifyByID settles an ambiguous commit of txnID by its own state (SHOW
// TRANSACTION WHERE ID); ok is false when the lookup failed or the txn is
// not found (the label lookup decides then).
func (o *txnOps) classifyByID(ctx context.Context, db, lbl string, txnID int64, err error) (outcome, string, error, bool) {
	t, lerr := o.inspect.TransactionByID(ctx, db, txnID)
	if lerr != nil {
		return 0, "", nil, false
	}
	switch t.Status {
	case doris.TxnVisible, doris.TxnCommitted:
		return outDone, "", nil, true
	case doris.TxnAborted:
		return outAborted, "found ABORTED by txn id: " + t.Reason, err, true
	}
	return outRetry, "", fmt.Errorf("%w (txn %d of label %s is %s)", err, txnID, lbl, t.Status), true
}

// abortLabel aborts whatever PREPARE or PRECOMMITTED txn holds lbl. It
// succeeds when nothing running holds the label (ABORTED, UNKNOWN) and
// fails when the label is COMMITTED or VISIBLE.
func (o *txnOps) abortLabel(ctx context.Context, db, lbl string) error {
	return o.abortWith(ctx, db, lbl, func() error { return o.client.AbortLabel(ctx, db, lbl) })
}

// abortTxn aborts txnID (label lbl); like abortLabel.
func (o *txnOps) abortTxn(ctx context.Context, db, lbl string, txnID int64) error {
	return o.abortWith(ctx, db, lbl, func() error { return o.client.AbortTxn(ctx, db, txnID) })
}

func (o *txnOps) abortWith(ctx context.Context, db, lbl string, call func() error) error {
	start := o.clock.Now()
	for attempt := 1; ; attempt++ {
		err := call()
		switch {
		case err == nil, errors.Is(err, doris.ErrTxnAlreadyAborted), errors.Is(err, doris.ErrTxnNotFound):
			return nil
		case errors.Is(err, doris.ErrTxnAlreadyCommitted):
			return fmt.Errorf("abort label %s: %w", lbl, err)
		case errors.Is(err, doris.ErrUnauthorized), errors.Is(err, doris.ErrNotFound), ctx.Err() != nil:
			return fmt.Errorf("abort label %s: %w", lbl, err)
		}
		// Ambiguous, running txn not found, or other: look the label up.
		st, lerr := o.client.LoadState(ctx, db, lbl)
		if lerr == nil {
			switch st {
			case doris.TxnAborted, doris.TxnUnknown:
				return nil
			case doris.TxnVisible, doris.TxnCommitted:
				return fmt.Errorf("abort label %s: label is %s: %w", lbl, st, doris.ErrTxnAlreadyCommitted)
			}
		}
		o.log.Warn("abort failed, retrying", "label", lbl, "attempt", attempt, "err", err, "lookup_err", lerr)
		if werr := o.wait(ctx, start, attempt); werr != nil {
			return fmt.Errorf("abort label %s: giving up after %d attempts: %w (last error: %v)", lbl, attempt, werr, err)
		}
	}
}

// errGaveUp: Retry.MaxElapsed passed.
var errGaveUp = errors.New("retry budget (max elapsed) exhausted")

// wait sleeps the backoff of attempt (exponential, full jitter), or fails
// when ctx ends or the next try would start after Retry.MaxElapsed.
func (o *txnOps) wait(ctx context.Context, start time.Time, attempt int) error {
	d := o.retry.Initial << min(attempt-1, 30)
	if d <= 0 || d > o.retry.Max {
		d = o.retry.Max
	}
	if d > 0 {
		d = rand.N(d) + 1
	}
	if o.clock.Now().Add(d).Sub(start) > o.retry.MaxElapsed {
		return fmt.Errorf("%w (%v)", errGaveUp, o.retry.MaxElapsed)
	}
	select {
	case <-o.clock.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lookup returns the state of lbl, retrying lookup failures within the
// retry budget (a read: always safe to repeat).
func (o *txnOps) lookup(ctx context.Context, db, lbl string) (doris.TxnStatus, error) {
	start := o.clock.Now()
	for attempt := 1; ; attempt++ {
		st, err := o.client.LoadState(ctx, db, lbl)
		if err == nil {
			return st, nil
		}
		if errors.Is(err, doris.ErrUnauthorized) || errors.Is(err, doris.ErrNotFound) {
			return "", fmt.Errorf("look up label %s: %w", lbl, err)
		}
		if werr := o.wait(ctx, start, attempt); werr != nil {
			return "", fmt.Errorf("look up label %s: %w (last error: %v)", lbl, werr, err)
		}
	}
}
