package ledger

import (
	"encoding/json"
	"time"
)

// Events recorded in Entry.Event.
const (
	// EventDecided: the checkpoint's decision is durable in the store.
	EventDecided = "decided"
	// EventCommitted: Doris reported the label VISIBLE or COMMITTED.
	EventCommitted = "committed"
	// EventAborted: a transaction was aborted (failed precommit, or an
	// announced undecided label aborted during recovery).
	EventAborted = "aborted"
	// EventHealed: a decided checkpoint found ABORTED was replayed.
	EventHealed = "healed"
	// EventResolved: an operator resolved a label Doris no longer knows.
	EventResolved = "resolved"
	// EventTableCreated: the sink created the target table (doris.create_table);
	// Note holds the DDL. Checkpoint is 0 (no checkpoint's own event).
	EventTableCreated = "table_created"
	// EventSchemaChanged: the sink changed the target table before a load
	// needed it (records.schema_evolution); Note holds the DDL. Checkpoint
	// is 0.
	EventSchemaChanged = "schema_changed"
	// EventResliced: an operator changed the job's writer slot count
	// (`checkpoint reslot`); Note holds the plan. Checkpoint is 0.
	EventResliced = "resliced"
	// EventResolveRequested: an operator asked the owner of a writer scope
	// to resolve a decided label (`checkpoint resolve`, an operator record
	// in Kafka); the owner's "resolved" entry follows when it applies it.
	EventResolveRequested = "resolve_requested"
)

// ValidEvent reports whether Append accepts event: one of the Event
// constants.
func ValidEvent(event string) bool {
	switch event {
	case EventDecided, EventCommitted, EventAborted, EventHealed, EventResolved, EventTableCreated, EventSchemaChanged,
		EventResliced, EventResolveRequested:
		return true
	}
	return false
}

// Entry is one ledger line. Field names are stable (snake_case JSON); zero
// times, an empty State, Ranges and Note are omitted, counts are always
// written.
type Entry struct {
	// Time is when the event happened; Append fills a zero Time with now.
	Time time.Time `json:"time"`
	// Event is one of the Event constants.
	Event string `json:"event"`
	// Checkpoint is the checkpoint id.
	Checkpoint uint64 `json:"checkpoint"`
	// Job, DB, Table name the job and the target table.
	Job   string `json:"job"`
	DB    string `json:"db"`
	Table string `json:"table"`
	// Sub is the sub-load index of the txn within its table (loader
	// Config.SubLoads; 0 without sub-loads).
	Sub int `json:"sub,omitempty"`
	// Txns is the number of txns the checkpoint decided when it has more
	// than one (one entry per txn, each naming its table); 0 otherwise.
	Txns int `json:"txns,omitempty"`
	// Label and TxnID name the Stream Load transaction.
	Label string `json:"label"`
	TxnID int64  `json:"txn_id"`
	// Ranges are the source ranges per partition (opaque to the ledger),
	// stored compacted.
	Ranges json.RawMessage `json:"ranges,omitempty"`
	// State is the Doris transaction state when known (e.g. "VISIBLE").
	State string `json:"state,omitempty"`
	// Row counts and bytes as Doris reported them for the load.
	RowsTotal      int64 `json:"rows_total"`
	RowsLoaded     int64 `json:"rows_loaded"`
	RowsFiltered   int64 `json:"rows_filtered"`
	RowsUnselected int64 `json:"rows_unselected"`
	Bytes          int64 `json:"bytes"`
	// DeadLettered counts the checkpoint's source records sent to a
	// dead-letter topic instead of being loaded (docs/design.md §5).
	DeadLettered int64 `json:"dead_lettered,omitempty"`
	// Times of precommit, decision and commit, zero when not reached.
	PrecommitAt time.Time `json:"precommit_at,omitzero"`
	DecidedAt   time.Time `json:"decided_at,omitzero"`
	CommittedAt time.Time `json:"committed_at,omitzero"`
	// Attempts counts the load attempts of the checkpoint.
	Attempts int `json:"attempts"`
	// Note is free text (an operator's reason, an abort message).
	Note string `json:"note,omitempty"`
}

// Ranges renders an entry's Ranges document, {"start":…,"end":…}, from a
// decision's opaque start and end positions (null for a missing one).
func Ranges(start, end []byte) json.RawMessage {
	b := []byte(`{"start":`)
	b = appendPosition(b, start)
	b = append(b, `,"end":`...)
	b = appendPosition(b, end)
	return append(b, '}')
}

func appendPosition(b, v []byte) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	return append(b, v...)
}
