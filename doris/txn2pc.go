package doris

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// CommitTxn commits the PRECOMMITTED txn txnID of db (§3, PUT
// /api/{db}/_stream_load_2pc, txn_operation: commit). A nil error means
// Doris answered Success: the txn is COMMITTED and becomes VISIBLE
// asynchronously. Refusals are a *TxnError: ErrTxnAlreadyCommitted (the
// commit already happened: treat as success), ErrTxnAlreadyAborted (Reason
// says why), ErrTxnNotFound, ErrTxnNotPrecommitted, ErrSchemaIncompatible
// (a partial-update load whose table changed, docs/doris-facts.md §13: it
// can never commit), ErrUnauthorized,
// ErrNotFound. Connection errors and 5xx are retried (commit is safe to
// repeat: a repeat answers ErrTxnAlreadyCommitted); when the outcome stays
// unknown IsAmbiguous(err) is true.
func (c *Client) CommitTxn(ctx context.Context, db string, txnID int64) error {
	return c.twoPC(ctx, "commit", db, "", txnID)
}

// AbortTxn aborts the PREPARE or PRECOMMITTED txn txnID of db (§3.3; the
// abort reason becomes "User Abort"). Refusals are a *TxnError:
// ErrTxnAlreadyAborted and ErrTxnNotFound (callers usually treat both as
// done), ErrTxnAlreadyCommitted (too late to abort), ErrUnauthorized,
// ErrNotFound. Retries and ambiguity as CommitTxn.
func (c *Client) AbortTxn(ctx context.Context, db string, txnID int64) error {
	return c.twoPC(ctx, "abort", db, "", txnID)
}

// CommitLabel commits the PRECOMMITTED txn holding label in db (Doris 2.1+,
// §3.2). Errors as CommitTxn, plus ErrRunningTxnNotFound when the label's
// txns are all in other states (e.g. already VISIBLE or ABORTED: look the
// state up) and ErrTxnNotFound when the label is unknown or expired.
func (c *Client) CommitLabel(ctx context.Context, db, label string) error {
	return c.twoPC(ctx, "commit", db, label, 0)
}

// AbortLabel aborts the PREPARE or PRECOMMITTED txn holding label in db
// (Doris 2.1+). Errors as AbortTxn, plus ErrRunningTxnNotFound (nothing
// running holds the label) and ErrTxnNotFound (label unknown or expired).
func (c *Client) AbortLabel(ctx context.Context, db, label string) error {
	return c.twoPC(ctx, "abort", db, label, 0)
}

func (c *Client) twoPC(ctx context.Context, op, db, label string, txnID int64) error {
	if db == "" {
		return fmt.Errorf("%s: db is required", op)
	}
	if err := ValidateDatabaseName(db); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if label == "" && txnID <= 0 {
		return fmt.Errorf("%s: txn id %d is not positive", op, txnID)
	}
	ctx, cancel := withTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()

	hdr := http.Header{"txn_operation": {op}}
	target := "label " + label
	if label != "" {
		hdr["label"] = []string{label}
	} else {
		hdr["txn_id"] = []string{strconv.FormatInt(txnID, 10)}
		target = "txn " + strconv.FormatInt(txnID, 10)
	}
	what := fmt.Sprintf("%s %s in db %s", op, target, db)
	ans, err := c.doSmall(ctx, what, http.MethodPut, []string{"api", db, "_stream_load_2pc"}, nil, hdr, true)
	if err != nil {
		return err
	}
	te := &TxnError{Op: op, DB: db, Label: label, TxnID: txnID}
	if ans.status != http.StatusOK {
		te.Code, te.Message = fmt.Sprintf("HTTP %d", ans.status), snippet(ans.body)
		return te
	}
	a, err := decodeFEAnswer(ans.body)
	if err != nil {
		return &ambiguousError{op: what, err: err}
	}
	if a.Status == "Success" { // §3.4
		c.log.Debug("doris 2pc done", "op", op, "db", db, "target", target)
		return nil
	}
	te.Code, te.Message = a.refusal()
	if te.TxnID == 0 {
		te.TxnID = txnIDInMessage(te.Message)
	}
	te.Reason = abortReason(te.Message)
	return te
}
