// Package verify implements `doris-sink verify`: it reconciles the evidence
// ledger with Doris (every decided label's state, its txn id) and with
// Kafka (the ranges of consecutive checkpoints are contiguous per
// partition, no gap and no overlap, and end at or below the high
// watermark), docs/design.md §6. The reconciliation (Reconcile) is a pure
// function of the ledger, the store and two small lookup interfaces, so it
// is tested without Doris or Kafka.
package verify

import (
	"fmt"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Severity orders findings.
type Severity string

// Severities. A gap (offsets never loaded, loaded twice, or a decided
// checkpoint Doris does not hold) fails verify with its own exit code; an
// error (evidence that disagrees) fails it too; a warning is printed only.
const (
	SeverityGap     Severity = "gap"
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding kinds, stable for `-o json`.
const (
	// KindGap: offsets between two consecutive checkpoints were skipped.
	KindGap = "gap"
	// KindOverlap: offsets were covered by two checkpoints (loaded twice).
	KindOverlap = "overlap"
	// KindRange: a checkpoint's own range is malformed (end before start,
	// another topic, unreadable position).
	KindRange = "range"
	// KindHighWatermark: a range ends beyond the partition's high watermark.
	KindHighWatermark = "high-watermark"
	// KindState: Doris reports a state the ledger contradicts.
	KindState = "state"
	// KindTxn: Doris holds the label under another txn id.
	KindTxn = "txn"
	// KindRows: row counts disagree with the offsets they came from.
	KindRows = "rows"
	// KindLedger: the ledger or store is unreadable, torn or inconsistent.
	KindLedger = "ledger"
	// KindLingering: a PREPARE or PRECOMMITTED txn of the job's prefix is
	// older than the checkpoint interval plus a margin.
	KindLingering = "lingering-txn"
	// KindTableCount: a Duplicate Key table's row count differs from the
	// rows the ledger's committed checkpoints loaded.
	KindTableCount = "table-count"
	// KindTopicRecreated: a source topic's ID differs from the one the
	// evidence recorded: the topic was deleted and created again, and the
	// evidence's offsets are of the old topic.
	KindTopicRecreated = "topic-recreated"
	// KindUnverifiable: a fact could not be checked (label expired, Doris
	// or Kafka unreachable).
	KindUnverifiable = "unverifiable"
)

// Finding is one problem found.
type Finding struct {
	Severity Severity `json:"severity"`
	Kind     string   `json:"kind"`
	// Checkpoint is the checkpoint id concerned; 0 for the whole ledger.
	Checkpoint uint64 `json:"checkpoint,omitempty"`
	Label      string `json:"label,omitempty"`
	// Partition is set for range findings.
	Partition *int32 `json:"partition,omitempty"`
	// Scope is the writer slot of the checkpoint (group mode).
	Scope   string `json:"scope,omitempty"`
	Message string `json:"message"`
}

// String renders "severity kind checkpoint: message".
// A kind that repeats its severity ("gap") is written once.
func (f Finding) String() string {
	head := string(f.Severity) + " " + f.Kind
	if f.Kind == string(f.Severity) {
		head = f.Kind
	}
	if f.Scope != "" && f.Checkpoint != 0 {
		return fmt.Sprintf("%s writer slot %s checkpoint %d: %s", head, f.Scope, f.Checkpoint, f.Message)
	}
	if f.Checkpoint == 0 {
		return fmt.Sprintf("%s: %s", head, f.Message)
	}
	return fmt.Sprintf("%s checkpoint %d: %s", head, f.Checkpoint, f.Message)
}

// Checkpoint is one reconciled checkpoint (a row of the table).
type Checkpoint struct {
	ID uint64 `json:"checkpoint"`
	// Scope is the writer slot whose checkpoint it is (group mode: ids
	// are per slot); empty for a one-slot job.
	Scope string `json:"scope,omitempty"`
	Label string `json:"label"`
	TxnID int64  `json:"txn_id"`
	// Ledger is the last ledger event of the checkpoint (decided,
	// committed, healed, resolved).
	Ledger string `json:"ledger"`
	// Doris is the label's state in Doris ("" when not looked up).
	Doris string `json:"doris,omitempty"`
	// Offsets is the number of source offsets the checkpoint covers.
	Offsets int64 `json:"offsets"`
	// RowsTotal and RowsLoaded are Doris's counts for the load (-1 unknown).
	RowsTotal  int64 `json:"rows_total"`
	RowsLoaded int64 `json:"rows_loaded"`
	// Accounted explains offsets that are not rows (dead letters,
	// tombstones, transaction markers, compacted offsets); nil when every
	// offset is a row.
	Accounted *Accounting `json:"accounted,omitempty"`
	// Status is OK or the most severe finding's severity.
	Status string `json:"status"`
}

// Report is the result of Reconcile.
type Report struct {
	Job   string `json:"job"`
	Table string `json:"table"`
	Topic string `json:"topic,omitempty"`
	// Checkpoints lists the decided checkpoints of the ledger, ids
	// ascending (per writer slot in group mode, slot by slot).
	Checkpoints []Checkpoint `json:"checkpoints"`
	// RowsLoaded sums the loaded rows of committed checkpoints.
	RowsLoaded int64 `json:"rows_loaded"`
	// Offsets sums the offsets covered by decided checkpoints.
	Offsets int64 `json:"offsets"`
	// TableCount compares the table's row count with the ledger (absent
	// when Doris was not checked).
	TableCount *TableCount `json:"table_count,omitempty"`
	Findings   []Finding   `json:"findings"`
	// Sources say where each writer slot's checkpoints were read from
	// (job.coordinator kafka: the evidence topic, and local ledgers for
	// checkpoints decided before it).
	Sources []EvidenceSource `json:"sources,omitempty"`
	// Evidence is what was read of the evidence topic, every record (for
	// auditors: `-o json`).
	Evidence *EvidenceRead `json:"evidence,omitempty"`
}

// EvidenceRead is the part of the evidence topic verify read.
type EvidenceRead struct {
	Topic string `json:"topic"`
	// LogStart is the topic's log start offset (records before it
	// expired); Start the first offset read, End the last stable offset
	// the read stopped at (pass it as --since to read only newer ones).
	LogStart int64                     `json:"log_start"`
	Start    int64                     `json:"start"`
	End      int64                     `json:"end"`
	Records  []coordlog.EvidenceRecord `json:"records"`
}

// Count returns the number of findings of severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Err returns nil when the report has no gap and no error; a
// *cmdutil.GapsError (exit code cmdutil.ExitGaps) when it has a gap; else
// an error counting the mismatches (exit code 1).
func (r *Report) Err() error {
	g, e := r.Count(SeverityGap), r.Count(SeverityError)
	switch {
	case g > 0:
		return &cmdutil.GapsError{Gaps: g}
	case e > 0:
		return fmt.Errorf("verify: %d mismatch(es) between ledger, Doris and Kafka", e)
	}
	return nil
}

func (r *Report) add(f Finding) { r.Findings = append(r.Findings, f) }
