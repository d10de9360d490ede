package doris

import "time"

// TxnStatus is a Doris transaction state as printed by get_load_state and
// SHOW TRANSACTION (FE TransactionStatus.toString / name(); docs/doris-facts.md §5).
type TxnStatus string

// Transaction states (docs/doris-facts.md §5). VISIBLE and ABORTED are final;
// PREPARE, PRECOMMITTED and COMMITTED are "running".
const (
	TxnUnknown      TxnStatus = "UNKNOWN"
	TxnPrepare      TxnStatus = "PREPARE"
	TxnCommitted    TxnStatus = "COMMITTED"
	TxnVisible      TxnStatus = "VISIBLE"
	TxnAborted      TxnStatus = "ABORTED"
	TxnPrecommitted TxnStatus = "PRECOMMITTED"
)

// Final reports whether the state can no longer change (VISIBLE or ABORTED).
func (s TxnStatus) Final() bool { return s == TxnVisible || s == TxnAborted }

// Running reports whether the state counts against the running-txn quota
// (PREPARE, PRECOMMITTED or COMMITTED).
func (s TxnStatus) Running() bool {
	return s == TxnPrepare || s == TxnPrecommitted || s == TxnCommitted
}

// Transaction is one row of SHOW TRANSACTION (FE TransProcDir.TITLE_NAMES,
// docs/doris-facts.md §6.2). Zero times mean the column was NULL (`\N`).
type Transaction struct {
	ID                 int64     // TransactionId
	Label              string    // Label
	Coordinator        string    // Coordinator, e.g. "BE: 127.0.0.1"
	Status             TxnStatus // TransactionStatus
	SourceType         string    // LoadJobSourceType; BACKEND_STREAMING for stream load
	PrepareTime        time.Time // PrepareTime
	PreCommitTime      time.Time // PreCommitTime
	CommitTime         time.Time // CommitTime
	PublishTime        time.Time // PublishTime
	FinishTime         time.Time // FinishTime
	Reason             string    // Reason, e.g. "timeout by txn manager" or "User Abort"
	ErrorReplicasCount int64     // ErrorReplicasCount
	ListenerID         int64     // ListenerId; -1 for stream load
	TimeoutMs          int64     // TimeoutMs
	ErrMsg             string    // ErrMsg
}

// TransactionColumns are the SHOW TRANSACTION column names, in order.
var TransactionColumns = []string{
	"TransactionId", "Label", "Coordinator", "TransactionStatus", "LoadJobSourceType",
	"PrepareTime", "PreCommitTime", "CommitTime", "PublishTime", "FinishTime",
	"Reason", "ErrorReplicasCount", "ListenerId", "TimeoutMs", "ErrMsg",
}

// TimeLayout is the layout Doris uses for SHOW TRANSACTION times
// (TimeUtils.longToTimeString, "yyyy-MM-dd HH:mm:ss").
const TimeLayout = "2006-01-02 15:04:05"
