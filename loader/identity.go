package loader

import (
	"context"
	"errors"
	"fmt"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// TxnInspector is the part of a Doris client that reads transactions over
// the FE MySQL protocol (SHOW TRANSACTION, docs/doris-facts.md §6.2).
// *doris.Client satisfies it. When the Doris given to New satisfies it,
// and reports MySQLConfigured() true when it has that method, the Loader
// uses it for its identity checks (docs/design.md §2, identity checks):
// the txn id holding a decided label, and the running txns of the job's
// prefix that its store never announced (a second writer). Without it the
// txn id holding a label is read from a Label Already Exists answer to an
// empty 2PC probe load of that label (docs/doris-facts.md §2.5, §11.7) and
// running txns under unannounced labels are not looked for.
type TxnInspector interface {
	// TransactionByLabel returns the newest txn of label in db
	// (doris.ErrTxnNotFound when none).
	TransactionByLabel(ctx context.Context, db, label string) (*doris.Transaction, error)
	// TransactionByID returns txn id of db (doris.ErrTxnNotFound when
	// unknown).
	TransactionByID(ctx context.Context, db string, id int64) (*doris.Transaction, error)
	// TransactionsByLabelLike returns every txn of db whose label matches
	// pattern (% is the only wildcard), an empty list when none.
	TransactionsByLabelLike(ctx context.Context, db, pattern string) ([]doris.Transaction, error)
}

// inspectorOf returns client's TxnInspector, nil when it has none or its
// MySQL address is not configured.
func inspectorOf(client Doris) TxnInspector {
	ti, ok := client.(TxnInspector)
	if !ok {
		return nil
	}
	if c, ok := client.(interface{ MySQLConfigured() bool }); ok && !c.MySQLConfigured() {
		return nil
	}
	return ti
}

// IdentityError is a decided label that Doris holds committed (VISIBLE or
// COMMITTED) under another txn than the one the decision recorded: the
// decided txn was aborted and another writer loaded the label, so the rows
// visible under it are not the ones this job decided (docs/design.md §2,
// identity checks). It is never taken for "done". It wraps
// checkpoint.ErrFenced: the job must stop.
type IdentityError struct {
	// CheckpointID and Table ("db.table") name the decided txn; 0 and ""
	// when the error comes from a Participant commit.
	CheckpointID uint64
	Table        string
	// Label is the decided label.
	Label string
	// DecidedTxnID is the txn id the decision recorded (the latest decided:
	// a heal records its new txn id).
	DecidedTxnID int64
	// FoundTxnID is the txn Doris holds the label under, 0 when it could
	// not be read (no MySQL and the probe failed).
	FoundTxnID int64
	// FoundState is that txn's state, VISIBLE or COMMITTED.
	FoundState doris.TxnStatus
}

// Error names the checkpoint, label, both txn ids and what to do.
func (e *IdentityError) Error() string {
	found := "another txn"
	if e.FoundTxnID > 0 {
		found = fmt.Sprintf("txn %d", e.FoundTxnID)
	}
	what := "label " + e.Label
	if e.Table != "" {
		what = fmt.Sprintf("checkpoint %d table %s label %s", e.CheckpointID, e.Table, e.Label)
	}
	return fmt.Sprintf("fencing violation: decided %s is %s in Doris under %s, but the decision recorded txn %d, "+
		"which is not loaded: another writer used this job's prefix and scope (a second process with the same job "+
		"config, or a restored or copied store); its rows are not this decision's. Stop every other writer of the job, "+
		"compare the table with the source range of the checkpoint, then restore the newest store "+
		"(docs/operations.md, fencing violations)", what, e.FoundState, found, e.DecidedTxnID)
}

// Unwrap returns checkpoint.ErrFenced.
func (e *IdentityError) Unwrap() error { return checkpoint.ErrFenced }

// SecondWriterError is a running (PREPARE or PRECOMMITTED) txn under this
// job's prefix and label scope whose label the store neither announced nor
// decided: another writer uses the prefix and scope, or the store was
// rolled back. Recover refuses to start and aborts nothing (docs/design.md
// §2, identity checks). It wraps checkpoint.ErrFenced.
type SecondWriterError struct {
	// DB is the database holding the txn.
	DB string
	// Label, TxnID and State name the txn.
	Label string
	TxnID int64
	State doris.TxnStatus
	// Scope is the label scope (writer) the label belongs to.
	Scope string
}

// Error names the label, txn and the causes.
func (e *SecondWriterError) Error() string {
	return fmt.Sprintf("second writer: label %s (txn %d, %s) in db %s is under this job's prefix and scope %s, "+
		"but this store never announced it: a second writer uses this job's prefix, or the store was rolled back; "+
		"refusing to start (nothing aborted). Stop the other writer (find it with `doris-sink label status %s`), "+
		"or restore the newest store; once no other writer runs, abort the txn with `doris-sink txn abort %d --db %s` "+
		"and start again", e.Label, e.TxnID, e.State, e.DB, e.Scope, e.Label, e.TxnID, e.DB)
}

// Unwrap returns checkpoint.ErrFenced.
func (e *SecondWriterError) Unwrap() error { return checkpoint.ErrFenced }

// holder returns the txn id and state of the live (non-ABORTED) txn holding
// lbl in db: SHOW TRANSACTION WHERE LABEL when a TxnInspector is
// available, else an empty 2PC probe load of lbl, refused with Label
// Already Exists and the holder's txn id (docs/doris-facts.md §2.3, §2.5). A
// label no live txn holds returns (0, TxnAborted) (or TxnUnknown when the
// inspector knows no txn of the label); a probe that began a txn (the label
// was free) aborts that txn by its id first. With noProbe set nothing is
// probed: without an answer from the inspector it fails. table is
// "db.table".
func (l *Loader) holder(ctx context.Context, table, lbl string, noProbe bool) (int64, doris.TxnStatus, error) {
	db, name, err := checkpoint.SplitTable(table)
	if err != nil {
		return 0, "", err
	}
	if ti := l.inspect; ti != nil {
		t, err := ti.TransactionByLabel(ctx, db, lbl)
		switch {
		case errors.Is(err, doris.ErrTxnNotFound):
			return 0, doris.TxnUnknown, nil
		case err == nil:
			return t.ID, t.Status, nil
		}
		if noProbe {
			return 0, "", fmt.Errorf("show transaction of label %s: %w", lbl, err)
		}
		l.log.Warn("identity check: SHOW TRANSACTION failed; probing the label instead", "label", lbl, "err", err)
	}
	if noProbe {
		return 0, "", fmt.Errorf("txn id of label %s: no SHOW TRANSACTION (doris.mysql) and no probe allowed", lbl)
	}
	target := Target{DB: db, Table: name, Format: l.cfg.Format}
	if tt := l.tables.byName[table]; tt != nil {
		target = tt.t
	}
	res, err := l.client.StreamLoad(ctx, loadRequest(target, lbl, true), nil)
	var le *doris.LoadError
	switch {
	case err == nil && res != nil && res.TxnID > 0:
		// The label was free: the probe began (and precommitted) an
		// empty txn. Abort it by its id.
		if aerr := l.ops.abortTxn(ctx, db, lbl, res.TxnID); aerr != nil {
			return 0, "", fmt.Errorf("identity probe of label %s began txn %d, and aborting it failed: %w", lbl, res.TxnID, aerr)
		}
		return 0, doris.TxnAborted, nil
	case errors.As(err, &le) && le.Result != nil && le.Result.ExistingTxnID > 0:
		switch le.Result.ExistingJobStatus {
		case doris.JobRunning:
			return le.Result.ExistingTxnID, doris.TxnPrepare, nil
		case doris.JobPrecommitted:
			return le.Result.ExistingTxnID, doris.TxnPrecommitted, nil
		default: // FINISHED: COMMITTED or VISIBLE
			return le.Result.ExistingTxnID, doris.TxnVisible, nil
		}
	case err == nil:
		return 0, "", fmt.Errorf("identity probe of label %s: no txn id in the answer", lbl)
	}
	return 0, "", fmt.Errorf("identity probe of label %s (empty 2PC load): %w", lbl, err)
}
