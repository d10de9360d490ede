package status

import (
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/jobstate"
	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/metrics"
)

// States of Result.State besides the running process's own
// (metrics.StateRecovering, StateRunning, StateStalled).
const (
	// StateNotRunning: nothing listens on metrics.listen.
	StateNotRunning = "not running"
	// StateRebalancing: the asked group-mode member is out of its consumer
	// group (a rebalance in progress, or its joins failing);
	// Result.Membership says since when.
	StateRebalancing = "rebalancing"
	// StateUnknown: the process could not be asked (metrics.listen empty,
	// a timeout, another job answering); Process.Detail says why.
	StateUnknown = "unknown"
)

// Result is the output of `doris-sink status -o json`. Field names are
// stable; group mode added Group and the partitions' slot and owner.
type Result struct {
	Job   string `json:"job"`
	Topic string `json:"topic"`
	Table string `json:"table"`
	// State is the running process's state (recovering, running, stalled),
	// StateNotRunning or StateUnknown.
	State string `json:"state"`
	// Process is what metrics.listen answered.
	Process Process `json:"process"`
	// Membership is the asked process's consumer-group membership (group
	// mode): in the group, or rebalancing since when.
	Membership *metrics.MembershipStatus `json:"membership,omitempty"`
	// Stall is why the running job does not progress (State stalled).
	Stall *metrics.StallStatus `json:"stall,omitempty"`
	// LastCheckpoint is the store's last decision (its age is relative to
	// this command's clock); absent before the first.
	LastCheckpoint *metrics.CheckpointStatus `json:"last_checkpoint,omitempty"`
	// Tables are the txns of the last decision, one per table it loaded
	// (a routed job loads several; an untouched table has none), sorted by
	// table; absent before the first decision and for an empty one.
	Tables []TableStatus `json:"tables,omitempty"`
	// Lag sums Partitions[].Lag; absent when no partition's lag is known.
	Lag *int64 `json:"lag,omitempty"`
	// Partitions are sorted by partition.
	Partitions []Partition `json:"partitions"`
	// Store is the checkpoint store read.
	Store Store `json:"store"`
	// KafkaError says why the high watermarks are missing.
	KafkaError string `json:"kafka_error,omitempty"`
	// Group is the whole job read from Kafka (job.coordinator kafka):
	// every writer slot with its owner (the consumer-group member holding
	// it, "none (stopped)"), last decision and lag, and every partition's
	// slot and owner. LastCheckpoint is then the newest decision of any
	// slot.
	Group *jobstate.Group `json:"group,omitempty"`
}

// TableStatus is one table's txn in the last decision.
type TableStatus struct {
	// Table is "db.table".
	Table string `json:"table"`
	// Sub is the txn's sub-load within the table (doris.sub_loads); absent
	// for sub-load 0.
	Sub   int    `json:"sub,omitempty"`
	Label string `json:"label"`
	TxnID int64  `json:"txn_id"`
	// Committed is true once the store recorded the txn committed.
	Committed bool `json:"committed"`
	// RowsLoaded is Doris's NumberLoadedRows of the txn; absent when the
	// store did not record counts.
	RowsLoaded *int64 `json:"rows_loaded,omitempty"`
}

// Process is the running process as metrics.listen answered.
type Process struct {
	// Addr is the address asked (metrics.listen, a wildcard host asked on
	// loopback); empty when metrics.listen is empty.
	Addr string `json:"addr,omitempty"`
	// Running is true when the process answered for this job.
	Running   bool      `json:"running"`
	PID       int       `json:"pid,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// Detail says why Running is false.
	Detail string `json:"detail,omitempty"`
	// MemberID, Generation and Slots are set when a group-mode member
	// answered: its consumer-group membership and the slots it owns, each
	// with its job's state, stall, last decided checkpoint and lag per
	// partition.
	MemberID   string               `json:"member_id,omitempty"`
	Generation *int32               `json:"generation,omitempty"`
	Slots      []metrics.SlotStatus `json:"slots,omitempty"`
}

// Store is the checkpoint store read: in job.data_dir, or the job's Kafka
// state topic (job.coordinator kafka).
type Store struct {
	Dir string `json:"dir"`
	// Found is false when the directory holds no store (the job never ran
	// with this data_dir).
	Found bool `json:"found"`
	// Error says why the store could not be read, or whose it is when it
	// belongs to another job.
	Error string `json:"error,omitempty"`
	// StateTopic and Offset locate the state record read
	// (job.coordinator kafka only).
	StateTopic string `json:"state_topic,omitempty"`
	Offset     *int64 `json:"offset,omitempty"`
}

// Partition is one partition's positions; an absent offset is unknown.
type Partition struct {
	// Topic is the partition's topic (a job may read several).
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	// Loaded is the end offset of the store's last decision for it.
	Loaded *int64 `json:"loaded,omitempty"`
	// Read is the running process's next offset to read.
	Read *int64 `json:"read,omitempty"`
	// HighWatermark is Kafka's, listed by this command.
	HighWatermark *int64 `json:"high_watermark,omitempty"`
	// LogStart is the partition's first offset in Kafka.
	LogStart *int64 `json:"log_start,omitempty"`
	// Lag is HighWatermark − Loaded; before the first decision of a job
	// starting at earliest, HighWatermark − LogStart (everything).
	Lag *int64 `json:"lag,omitempty"`
	// Slot and Scope are the writer slot owning the partition and Owner
	// the member holding it (job.coordinator kafka; Group).
	Slot  *int   `json:"slot,omitempty"`
	Scope string `json:"scope,omitempty"`
	Owner string `json:"owner,omitempty"`
}
