package loader

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Sentinels, matched with errors.Is.
var (
	// ErrNeedRecover is wrapped by every error after which the Loader must
	// run Recover before more Writes: a checkpoint failed (its txns were
	// aborted or will be resolved by Recover). The caller rewinds its source
	// to the position Recover returns. See *CheckpointError.
	ErrNeedRecover = errors.New("loader: recover required")
	// ErrNotRecovered is returned by Write and Checkpoint before Recover
	// returned successfully (docs/design.md §2 invariant 4: resolve before read).
	ErrNotRecovered = errors.New("loader: Recover has not run")
	// ErrCrashed is returned by every call after a Crash failpoint abandoned
	// the loader.
	ErrCrashed = errors.New("loader: crashed (failpoint)")
	// ErrClosed is returned by calls after Close.
	ErrClosed = errors.New("loader: closed")
	// ErrTxnAborted is wrapped by *AbortedError.
	ErrTxnAborted = errors.New("loader: transaction aborted")
)

// CheckpointError is a failed checkpoint. It wraps ErrNeedRecover and the
// cause: run Recover and resume from the position it returns (Position
// here is the last decided position, which Recover normally returns too).
type CheckpointError struct {
	// ID and Label name the checkpoint.
	ID    uint64
	Label string
	// Stage is where it failed: "announce", "stream", "precommit",
	// "commit of previous", "decide", "commit".
	Stage string
	// Position is the last decided position (nil before the first).
	Position json.RawMessage
	// Err is the cause.
	Err error
}

// Error names the checkpoint, stage and position.
func (e *CheckpointError) Error() string {
	pos := "the start"
	if len(e.Position) > 0 {
		pos = string(e.Position)
	}
	return fmt.Sprintf("checkpoint %d label %s failed at %s (run Recover, then resume from %s): %v",
		e.ID, e.Label, e.Stage, pos, e.Err)
}

// Unwrap returns ErrNeedRecover and the cause.
func (e *CheckpointError) Unwrap() []error { return []error{ErrNeedRecover, e.Err} }

// UnresolvedError is a decided, uncommitted checkpoint whose label Doris no
// longer knows (get_load_state UNKNOWN: expired after
// streaming_label_keep_max_second or label_num_threshold, docs/doris-facts.md §4).
// The data may or may not be visible; only the operator can tell (by
// querying the table). Recover stops until ResolveAssume records a choice.
type UnresolvedError struct {
	CheckpointID uint64
	// Table ("db.table"), Label and TxnID name the decided txn.
	Table string
	Label string
	TxnID int64
	// Txns is how many txns the decision holds: with more than one, the
	// suggested command names Table (checkpoint resolve --table).
	Txns int
	// DecidedAt and Age say how old the decision is.
	DecidedAt time.Time
	Age       time.Duration
	// Start and End are the checkpoint's source positions.
	Start, End json.RawMessage
}

// Error names the label, table, txn, checkpoint, age and the operator's
// choices.
func (e *UnresolvedError) Error() string {
	what, where, flag := "label "+e.Label, "the table", ""
	if e.Table != "" {
		what, where = "table "+e.Table+" label "+e.Label, "table "+e.Table
		if e.Txns > 1 {
			flag = " --table " + e.Table
		}
	}
	return fmt.Sprintf("checkpoint %d %s (txn %d, decided %s ago) was never marked committed and Doris no longer "+
		"knows the label (expired): check whether its rows [%s, %s) are in %s, then run "+
		"`doris-sink checkpoint resolve -c <config> --checkpoint %d%s --assume visible` if they are, or "+
		"`--checkpoint %d%s --assume aborted` if not "+
		"(the checkpoint is then replayed into the same label)",
		e.CheckpointID, what, e.TxnID, e.Age.Round(time.Second), posString(e.Start), posString(e.End), where,
		e.CheckpointID, flag, e.CheckpointID, flag)
}

// FencingError is an announced, undecided label that Doris reports VISIBLE
// or COMMITTED: another writer uses this label prefix, or the store was
// rolled back (docs/design.md §2 recovery table, §3). Nothing is written.
type FencingError struct {
	Label string
	// State is what Doris reported, or "FINISHED" from a Label Already
	// Exists answer.
	State string
}

// Error names the label and the likely causes.
func (e *FencingError) Error() string {
	return fmt.Sprintf("fencing violation: label %s is %s in Doris but this store never decided it: another writer "+
		"uses this job name (label prefix), or the checkpoint store was rolled back, or a proxy dropped the "+
		"two_phase_commit header so Doris committed instead of precommitting; stop every other writer of the "+
		"job, restore the newest store, check the proxies", e.Label, e.State)
}

// AbortedError is a transaction that Doris aborted although it was meant to
// be committed (e.g. "timeout by txn manager" after the precommit timeout,
// docs/doris-facts.md §5). Its data is not loaded: the caller must replay it (the
// Loader heals it in Recover).
type AbortedError struct {
	Label  string
	TxnID  int64
	Reason string
}

// Error names the label, txn and reason.
func (e *AbortedError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = "unknown reason"
	}
	return fmt.Sprintf("label %s txn %d was aborted by Doris (%s): its rows are not loaded; replay them", e.Label, e.TxnID, reason)
}

// Unwrap returns ErrTxnAborted.
func (e *AbortedError) Unwrap() error { return ErrTxnAborted }

func posString(p json.RawMessage) string {
	if len(p) == 0 {
		return "start"
	}
	return string(p)
}

// ErrStoreReset is returned by Recover when the checkpoint store is brand
// new but the ledger beside it already holds evidence: the store was
// deleted or replaced, and starting afresh would load the source twice.
var ErrStoreReset = errors.New("checkpoint store is new but the job has run before")
