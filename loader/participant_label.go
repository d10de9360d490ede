package loader

import (
	"context"
	"errors"
)

// AbortLabel aborts whatever PREPARE or PRECOMMITTED txn of db holds lbl,
// for a coordinator that announced lbl durably and crashed before it knew
// the txn id. It succeeds when nothing running holds the label (ABORTED,
// never begun, expired) and fails when the label is COMMITTED or VISIBLE
// (matching doris.ErrTxnAlreadyCommitted), or Doris cannot be reached
// within the retry budget. Ambiguous answers are resolved by looking the
// label up (docs/doris-facts.md §6.1).
func (p *Participant) AbortLabel(ctx context.Context, db, lbl string) error {
	if db == "" || lbl == "" {
		return errors.New("abort label: db and label are required")
	}
	return p.ops.abortLabel(ctx, db, lbl)
}
