package checkpoint

import (
	"encoding/json"
	"time"
)

// MaxHistory bounds State.History; Decide drops the oldest beyond it.
const MaxHistory = 64

// Operator assumptions recorded in Resolution.Assumed.
const (
	// ResolvedVisible: the operator asserts the label's data is visible.
	ResolvedVisible = "visible"
	// ResolvedAborted: the operator asserts the label's data is not loaded.
	ResolvedAborted = "aborted"
)

// Owner identifies the one writer a store belongs to (docs/design.md §3, prefix
// ownership). A store opened with a different Owner is refused.
type Owner struct {
	// Job is the job name, which is the label prefix.
	Job string `json:"job"`
	// DB and Table name the target Doris table.
	DB    string `json:"db"`
	Table string `json:"table"`
	// Source names the source, e.g. "kafka:orders". It may be empty.
	Source string `json:"source"`
	// Writer is the writer instance (label scope), "0" standalone.
	Writer string `json:"writer"`
}

// Decision is a decided checkpoint: its label and transaction are committed
// (or healed) by recovery, never aborted (docs/design.md §2 invariant 2).
type Decision struct {
	// ID is the checkpoint id, ≥ 1.
	ID uint64 `json:"id"`
	// Label is Owner.Label(ID).
	Label string `json:"label"`
	// TxnID is the precommitted Doris transaction; 0 when Empty.
	TxnID int64 `json:"txn_id"`
	// Start and End are the caller's opaque source positions [Start, End).
	// They are stored compacted (insignificant JSON whitespace removed).
	Start json.RawMessage `json:"start,omitempty"`
	End   json.RawMessage `json:"end,omitempty"`
	// Empty is true when the checkpoint had no rows and so no transaction.
	Empty bool `json:"empty,omitempty"`
	// DecidedAt is when the decision was made durable.
	DecidedAt time.Time `json:"decided_at"`
	// Committed is true once Doris reported the transaction VISIBLE or
	// COMMITTED (or the checkpoint is Empty and needs no commit).
	Committed bool `json:"committed,omitempty"`
	// CommittedAt is when Committed became true; zero otherwise.
	CommittedAt time.Time `json:"committed_at,omitzero"`
	// Healed counts replays of [Start, End) after the transaction was found
	// ABORTED (docs/design.md §2, heal).
	Healed int `json:"healed,omitempty"`
	// Counts are the checkpoint's load counters known when it was decided:
	// the decision carries its own evidence (docs/design.md §6), so the ledger
	// entries of the checkpoint can be written, or rewritten after a crash,
	// from the store alone. Nil in stores written before doris-sink
	// recorded them (counts unknown). With several Txns they are the
	// checkpoint's totals (the sum of the txns' counts, plus DeadLettered).
	Counts *LoadCounts `json:"counts,omitempty"`
	// Incarnation is the FileStore incarnation (FileStore.Incarnation)
	// that wrote this decision; empty for decisions written by another
	// Store or before incarnations were recorded.
	Incarnation string `json:"incarnation,omitempty"`
	// Txns are the Stream Load transactions the checkpoint decided, one per
	// (table, sub-load) it touched, ordered by Table then Sub; an untouched
	// table has none, an Empty checkpoint none at all (format version 2).
	// A decision written by format version 1 decodes as one Txn of the
	// owner's table. ID, Label, TxnID, Empty, Committed and CommittedAt
	// above are then a summary kept for single-table readers: Label is
	// Owner.Label(ID), TxnID the id of the owner table's txn (0 when the
	// checkpoint did not touch that table), Empty is len(Txns) == 0, and
	// Committed is true once every txn is (see Decision.Sync).
	Txns []Txn `json:"txns,omitempty"`
}

// Txn is one Stream Load transaction of a decided checkpoint: the load of
// its rows into one table (docs/design.md §2, one decision for every table).
type Txn struct {
	// Table is the target table, "db.table".
	Table string `json:"table"`
	// Sub is the sub-load index within the table, in [0, Subs): the
	// checkpoint streamed the table's rows through Subs parallel Stream
	// Loads, each its own txn (docs/design.md §2, sub-loads).
	Sub int `json:"sub,omitempty"`
	// Subs is the number of sub-loads K the table's rows were routed over
	// in this checkpoint (a row goes to sub-load key mod K); 0 means 1. Every
	// txn of a table in one decision has the same Subs, and a heal routes
	// the replay with it, whatever K is configured now.
	Subs int `json:"subs,omitempty"`
	// Label is Owner.SubLabel(Table, Sub, checkpoint id): the label is
	// deterministic from the owner, the table, the sub-load and the
	// checkpoint id.
	Label string `json:"label"`
	// TxnID is the precommitted Doris transaction, > 0.
	TxnID int64 `json:"txn_id"`
	// Committed is true once Doris reported the txn VISIBLE or COMMITTED.
	Committed bool `json:"committed,omitempty"`
	// CommittedAt is when Committed became true; zero otherwise.
	CommittedAt time.Time `json:"committed_at,omitzero"`
	// Healed counts replays of the checkpoint's range into this table after
	// the txn was found ABORTED.
	Healed int `json:"healed,omitempty"`
	// Counts are the txn's load counters (DeadLettered is counted on the
	// decision, not here). Nil for a txn decoded from format version 1
	// (its counts are the decision's).
	Counts *LoadCounts `json:"counts,omitempty"`
}

// LoadCounts are the counters of a checkpoint's load as Doris reported
// them when it precommitted (or, at-least-once, committed) the load, with
// what the loader knows besides. All are zero for an Empty checkpoint
// except DeadLettered. No count is negative.
type LoadCounts struct {
	// RowsTotal, RowsLoaded, RowsFiltered and RowsUnselected are Doris's
	// NumberTotalRows, NumberLoadedRows, NumberFilteredRows and
	// NumberUnselectedRows.
	RowsTotal      int64 `json:"rows_total"`
	RowsLoaded     int64 `json:"rows_loaded"`
	RowsFiltered   int64 `json:"rows_filtered"`
	RowsUnselected int64 `json:"rows_unselected"`
	// Bytes is Doris's LoadBytes.
	Bytes int64 `json:"bytes"`
	// Attempts counts the load attempts of the checkpoint (or of its heal).
	Attempts int `json:"attempts"`
	// DeadLettered counts the checkpoint's source records sent to a
	// dead-letter topic instead of being loaded (docs/design.md §5).
	DeadLettered int64 `json:"dead_lettered"`
}

// Announcement is a label recorded before its Stream Load begins (docs/design.md
// §2 invariant 1) and not decided yet. Recovery aborts it.
//
// Announcements are per (checkpoint, table): a table first written in the
// middle of a checkpoint is announced with its own durable save before its
// Stream Load begins (State.AnnounceTable).
type Announcement struct {
	// ID is the checkpoint id, ≥ 1.
	ID uint64 `json:"id"`
	// Table is the target table, "db.table"; empty in stores written by
	// format version 1, meaning the owner's table (Decode fills it in).
	Table string `json:"table,omitempty"`
	// Sub is the sub-load index of the announced load within the table.
	Sub int `json:"sub,omitempty"`
	// Label is Owner.SubLabel(Table, Sub, ID).
	Label string `json:"label"`
	// At is when it was announced.
	At time.Time `json:"at"`
}

// Resolution records an operator's decision about a label whose state Doris
// no longer knows (`checkpoint resolve --assume visible|aborted`).
type Resolution struct {
	// CheckpointID and Label name the resolved checkpoint and the label of
	// its txn; Label is Owner.TxnLabel(Table, CheckpointID).
	CheckpointID uint64 `json:"checkpoint_id"`
	// Table is the resolved txn's table, "db.table"; empty means the
	// owner's table.
	Table string `json:"table,omitempty"`
	// Sub is the resolved txn's sub-load index within the table.
	Sub   int    `json:"sub,omitempty"`
	Label string `json:"label"`
	// Assumed is ResolvedVisible or ResolvedAborted.
	Assumed string `json:"assumed"`
	// By names who resolved it (user, host).
	By string `json:"by"`
	// At is when.
	At time.Time `json:"at"`
}

// State is the whole content of a store. The zero value is not valid; a new
// store starts as NewState(owner). A State is not safe for concurrent
// mutation; Store implementations copy it on Load and Save.
type State struct {
	// Owner is the store's owner; Save refuses a State of another owner.
	Owner Owner `json:"owner"`
	// Decided is the last decided checkpoint, nil before the first.
	Decided *Decision `json:"decided,omitempty"`
	// Announced lists announced, undecided labels, ids increasing.
	Announced []Announcement `json:"announced,omitempty"`
	// NextID is the id the next Announce hands out; it starts at 1.
	NextID uint64 `json:"next_id"`
	// History holds the decisions Decided replaced, oldest first, newest
	// last, at most MaxHistory.
	History []Decision `json:"history,omitempty"`
	// Resolved lists operator resolutions, oldest first.
	Resolved []Resolution `json:"resolved,omitempty"`
	// Incarnation is the random id of the FileStore open that last wrote
	// the state (FileStore.Incarnation); empty for other Stores and stores
	// written before incarnations were recorded.
	Incarnation string `json:"incarnation,omitempty"`
}

// NewState returns the state of a new store of owner: nothing decided or
// announced, NextID 1.
func NewState(owner Owner) *State {
	return &State{Owner: owner, NextID: 1}
}
