package loader

import (
	"context"
	"io"

	"github.com/doris-sink/doris-sink/doris"
)

// Doris is the part of a Doris client the loader uses. *doris.Client
// satisfies it; tests may wrap it to observe or alter calls. Every method
// has the contract of the *doris.Client method of the same name.
type Doris interface {
	// StreamLoad runs one Stream Load of body (docs/doris-facts.md §1). It never
	// retries; an ambiguous outcome (doris.IsAmbiguous) is resolved by the
	// caller with LoadState.
	StreamLoad(ctx context.Context, req doris.LoadRequest, body io.Reader) (*doris.LoadResult, error)
	// CommitTxn commits a PRECOMMITTED txn by id (§3).
	CommitTxn(ctx context.Context, db string, txnID int64) error
	// AbortTxn aborts a PREPARE or PRECOMMITTED txn by id (§3).
	AbortTxn(ctx context.Context, db string, txnID int64) error
	// AbortLabel aborts the PREPARE or PRECOMMITTED txn holding label (§3.2,
	// Doris 2.1+).
	AbortLabel(ctx context.Context, db, label string) error
	// LoadState returns the state of the latest txn of label (§6.1).
	LoadState(ctx context.Context, db, label string) (doris.TxnStatus, error)
}
