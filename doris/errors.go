package doris

import (
	"errors"
	"fmt"

	"github.com/doris-sink/doris-sink/doris/safetext"
)

// Sentinels matched with errors.Is against *LoadError and *TxnError. Which
// Doris message maps to which sentinel is in one table, messageCodes
// (codes.go).
var (
	// ErrLabelAlreadyExists: Stream Load answered "Label Already Exists"
	// (§2.2): a non-aborted txn holds the label. The *LoadError's
	// Result.ExistingJobStatus (RUNNING, PRECOMMITTED, FINISHED; §2.3) and
	// Result.ExistingTxnID say which.
	ErrLabelAlreadyExists = errors.New("doris: label already exists")
	// ErrDataQuality: too many rows were filtered ("[DATA_QUALITY_ERROR]too
	// many filtered rows", §8). The txn was rolled back.
	ErrDataQuality = errors.New("doris: too many filtered rows")
	// ErrTxnAlreadyCommitted: the txn is already COMMITTED or VISIBLE (§3.3).
	// From CommitTxn/CommitLabel this means the commit happened: treat it as
	// success. From AbortTxn/AbortLabel it means the abort is impossible.
	ErrTxnAlreadyCommitted = errors.New("doris: transaction already committed")
	// ErrTxnAlreadyAborted: the txn is already ABORTED (§3.3); TxnError.Reason
	// carries the abort reason (e.g. "timeout by txn manager", "User Abort").
	ErrTxnAlreadyAborted = errors.New("doris: transaction already aborted")
	// ErrTxnNotFound: no txn with that id, or no txn ever with that label, or
	// it was cleaned after label retention (§3.3 step 2-3, §4, §6.2).
	ErrTxnNotFound = errors.New("doris: transaction not found")
	// ErrRunningTxnNotFound: the label has txns but none in a state the
	// operation accepts (commit: PRECOMMITTED; abort: PREPARE/PRECOMMITTED),
	// e.g. it is already VISIBLE or ABORTED (§3.3 step 2). Look the state up.
	ErrRunningTxnNotFound = errors.New("doris: running transaction not found")
	// ErrSchemaIncompatible: the commit of a partial-update load failed
	// because the table's string column lengths changed after the load was
	// planned (docs/doris-facts.md §13). The txn stays PRECOMMITTED and can
	// never commit: abort it and load the rows again.
	ErrSchemaIncompatible = errors.New("doris: table schema changed incompatibly since the load was planned")
	// ErrTxnNotPrecommitted: commit of a txn still in PREPARE (§3.3).
	ErrTxnNotPrecommitted = errors.New("doris: transaction is prepare, not pre-committed")
	// ErrRunningTxnQuota: the db has max_running_txn_num_per_db running txns
	// (§5, §8); abort stale precommitted txns or wait.
	ErrRunningTxnQuota = errors.New("doris: too many running transactions on db")
	// ErrUnauthorized: credentials rejected (FE Unauthorized body §1.2, BE
	// "no valid Basic authorization" §1.3, MySQL access denied).
	ErrUnauthorized = errors.New("doris: unauthorized")
	// ErrNotFound: unknown database or table (§2.4).
	ErrNotFound = errors.New("doris: database or table not found")
	// ErrTwoPhaseCommitIgnored: a Stream Load sent with two_phase_commit:
	// true was answered Success (or Publish Timeout) with TwoPhaseCommit not
	// "true" (§2.1): the header did not reach the BE (e.g. a proxy that
	// drops headers with underscores) and the load was committed, not
	// precommitted. The *LoadError's Result has its TxnId. Unlike every
	// other LoadError, the data was loaded: an exactly-once writer must stop.
	ErrTwoPhaseCommitIgnored = errors.New("doris: two_phase_commit ignored, load committed")
)

// LoadError is a Stream Load answer that is not a success (success is
// Status Success or Publish Timeout, §10), or an FE refusal before the
// redirect (§1.2). The outcome is known: the load did not happen (for Label
// Already Exists: this request did not load; the existing txn is in Result),
// except for ErrTwoPhaseCommitIgnored, where it was loaded and committed.
type LoadError struct {
	Op    string // "stream load"
	DB    string
	Table string
	Label string
	TxnID int64 // TxnId of the answer; -1 when no txn was begun
	// Status is the BE Status ("Fail", "Label Already Exists"; "Success" or
	// "Publish Timeout" only with ErrTwoPhaseCommitIgnored), or for FE
	// answers "FAILED" (RestBaseResult) / "Unauthorized", or "HTTP <code>"
	// for a non-200 reply.
	Status  string
	Message string      // Doris's message, e.g. "[DATA_QUALITY_ERROR]too many filtered rows"
	Result  *LoadResult // the parsed BE answer; nil for FE and non-200 answers
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("%s %s.%s label %s: %s: %s", e.Op, e.DB, e.Table, e.Label, safetext.Escape(e.Status), safetext.Escape(e.Message))
}

// Unwrap returns the sentinel matching Status and Message, or nil.
func (e *LoadError) Unwrap() error {
	if e.Result != nil && e.Result.Succeeded() {
		return ErrTwoPhaseCommitIgnored
	}
	if e.Status == StatusLabelAlreadyExists {
		return ErrLabelAlreadyExists
	}
	if e.Status == "Unauthorized" {
		return ErrUnauthorized
	}
	if err := httpStatusSentinel(httpCodeOf(e.Status)); err != nil {
		return err
	}
	return classify(e.Message)
}

// httpCodeOf parses "HTTP <code>" statuses; 0 otherwise.
func httpCodeOf(status string) int {
	var code int
	if _, err := fmt.Sscanf(status, "HTTP %d", &code); err != nil {
		return 0
	}
	return code
}

// TxnError is a 2PC commit or abort refused by Doris (§3.3, §3.4), or a
// get_load_state error answer (Op "load state").
type TxnError struct {
	Op      string // "commit", "abort" or "load state"
	DB      string
	Label   string // set when the call was by label
	TxnID   int64  // set when the call was by id, or parsed from Message
	Code    string // the "status" of §3.4, e.g. "ANALYSIS_ERROR"; FE bodies: "FAILED", "Unauthorized"
	Message string // the "msg" of §3.4
	Reason  string // abort reason when the txn was already aborted
}

func (e *TxnError) Error() string {
	target := e.Label
	if target == "" {
		target = fmt.Sprintf("txn %d", e.TxnID)
	} else {
		target = "label " + target
	}
	return fmt.Sprintf("%s %s in db %s: %s: %s", e.Op, target, e.DB, safetext.Escape(e.Code), safetext.Escape(e.Message))
}

// Unwrap returns the sentinel matching Code and Message, or nil.
func (e *TxnError) Unwrap() error {
	if e.Code == "Unauthorized" {
		return ErrUnauthorized
	}
	if err := httpStatusSentinel(httpCodeOf(e.Code)); err != nil {
		return err
	}
	return classify(e.Message)
}

// ambiguousError marks a transport failure after the request may have been
// applied by Doris.
type ambiguousError struct {
	op  string
	err error
}

func (e *ambiguousError) Error() string {
	return fmt.Sprintf("%s: outcome unknown: %v", e.op, e.err)
}

func (e *ambiguousError) Unwrap() error { return e.err }

// IsAmbiguous reports whether err means the outcome of a StreamLoad,
// CommitTxn/AbortTxn/CommitLabel/AbortLabel call is unknown: the request may
// have reached Doris and been applied, but the answer was lost (timeout,
// connection reset, EOF, unparseable reply, 5xx from a proxy). The caller
// must look the label up (LoadState, TransactionByLabel) and must not assume
// either outcome. A connection refused before sending and any parsed Doris
// answer are not ambiguous.
func IsAmbiguous(err error) bool {
	var a *ambiguousError
	return errors.As(err, &a)
}
