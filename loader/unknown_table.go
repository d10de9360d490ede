package loader

import (
	"fmt"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// UnknownTableError is a row for a table (or database) Doris does not
// have, other than Config.Table (whose absence fails the checkpoint: it is
// the job's configuration): the first row of that table in a checkpoint
// began its Stream
// Load, and Doris refused the begin with NOT_FOUND before reading any of
// the body (the BE asks the FE to begin before it reads the body, and the
// FE's begin checks database and table first: stream_load.cpp,
// FrontendServiceImpl.java, docs/doris-facts.md §1.5, §2.4). Nothing
// of that table was loaded and no txn of it exists; the checkpoint is not
// failed: its other tables go on, and the caller decides what the row is
// (the Kafka connector dead-letters its record, or stops naming it). A
// later row of that table tries the begin again (the table may have been
// created since).
//
// While a checkpoint heals, a row of a table (other than Config.Table) its
// decision has no txn of is refused the same way, without asking Doris
// (HealOf set): no row of that table was loaded by the decision, so its
// records were refused then, and the heal loads exactly what was decided.
// Rows of a table that did get a txn routed there now (a routing change)
// leave that txn short: Checkpoint refuses the heal (*HealMismatchError).
// A decision without counts refuses such a row at once (routing changed).
type UnknownTableError struct {
	// Table is "db.table"; Label is the refused Stream Load's label ("" in
	// a heal).
	Table string
	Label string
	// HealOf is the id of the checkpoint being healed, 0 outside a heal.
	HealOf uint64
	// Err is Doris's answer (wraps doris.ErrNotFound); nil in a heal.
	Err error
}

// Error names the table and label, or the healed checkpoint.
func (e *UnknownTableError) Error() string {
	if e.HealOf != 0 {
		return fmt.Sprintf("table %s has no txn in checkpoint %d being healed: that checkpoint loaded none of its "+
			"rows (Doris did not have the table), and the heal does not either: the row is not loaded", e.Table, e.HealOf)
	}
	return fmt.Sprintf("table %s does not exist in Doris (the Stream Load of label %s was refused at begin: %v): "+
		"the row is not loaded", e.Table, e.Label, e.Err)
}

// Unwrap returns Err.
func (e *UnknownTableError) Unwrap() error { return e.Err }

// dropUnknown takes tl, whose Stream Load Doris refused at begin because
// its table does not exist (nothing read, no txn), out of a and returns
// the *UnknownTableError; the checkpoint goes on. Its label stays
// announced (Recover finds it UNKNOWN: nothing to do; the decision of a
// unannounces it).
func (l *Loader) dropUnknown(a *attempt, tl *tableLoad, err error) error {
	tl.s.abandon()
	tl.s = nil
	for i, o := range a.loads {
		if o == tl {
			a.loads = append(a.loads[:i], a.loads[i+1:]...)
			break
		}
	}
	db, table, _ := checkpoint.SplitTable(tl.tt.name)
	l.log.Warn("row for a table Doris does not have: not loaded", "db", db, "table", table, "label", tl.label, "err", err)
	return &UnknownTableError{Table: tl.tt.name, Label: tl.label, Err: err}
}

// healCounted reports whether every txn of d has its counts: only then can
// the replay be compared with d (checkHeal), and a row of a table d has no
// txn of be taken as one d did not load.
func healCounted(d *checkpoint.Decision) bool {
	for _, t := range d.Txns {
		if t.Counts == nil {
			return false
		}
	}
	return len(d.Txns) > 0
}
