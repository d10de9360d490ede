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
type UnknownTableError struct {
	// Table is "db.table"; Label is the refused Stream Load's label.
	Table string
	Label string
	// Err is Doris's answer (wraps doris.ErrNotFound).
	Err error
}

// Error names the table and label.
func (e *UnknownTableError) Error() string {
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
