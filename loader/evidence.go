package loader

import (
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// loadCounts returns the counters a decision records (docs/design.md §6): Doris's
// row and byte counters of res (zero when res is nil: an empty
// checkpoint), the load attempts and the dead-lettered count.
func loadCounts(res *doris.LoadResult, attempts int, deadLettered int64) *checkpoint.LoadCounts {
	c := &checkpoint.LoadCounts{Attempts: attempts, DeadLettered: deadLettered}
	if res != nil {
		c.RowsTotal = res.NumberTotalRows
		c.RowsLoaded = res.NumberLoadedRows
		c.RowsFiltered = res.NumberFilteredRows
		c.RowsUnselected = res.NumberUnselectedRows
		c.Bytes = res.LoadBytes
	}
	return c
}

// EvidenceStager stages evidence entries for the checkpoint store's next
// save (Config.Evidence; coordlog.Store implements it).
type EvidenceStager interface {
	// StageEvidence adds entries to the next save's evidence. Safe for
	// concurrent use.
	StageEvidence(entries ...ledger.Entry)
}

// stageEvidence hands e to Config.Evidence when e is an event the store
// cannot derive from its states (aborted, table_created,
// schema_changed).
func (l *Loader) stageEvidence(e ledger.Entry) {
	if l.cfg.Evidence == nil {
		return
	}
	switch e.Event {
	case ledger.EventAborted, ledger.EventTableCreated, ledger.EventSchemaChanged:
		l.cfg.Evidence.StageEvidence(e)
	}
}

// evidence appends one ledger entry (docs/design.md §6) for checkpoint d, with
// d.Counts (all zero when nil: unknown, or an attempt never decided). The
// store's decision is the one source of the counts: every entry of a
// decided checkpoint is written from it, so an entry lost to a crash can be
// written again by Recover (repairEvidence). The ledger is evidence, not
// the coordinator's log: a failed append is logged, never fatal.
func (l *Loader) evidence(event string, d checkpoint.Decision, state doris.TxnStatus, note string) {
	if l.ledger == nil && l.cfg.Evidence == nil {
		return
	}
	e := ledger.Entry{
		Time:       l.clock.Now(),
		Event:      event,
		Checkpoint: d.ID,
		Job:        l.cfg.Job,
		DB:         l.cfg.DB,
		Table:      l.cfg.Table,
		Label:      d.Label,
		TxnID:      d.TxnID,
		State:      string(state),
		DecidedAt:  d.DecidedAt,
		Note:       note,
	}
	if len(d.Start) > 0 || len(d.End) > 0 {
		e.Ranges = ledger.Ranges(d.Start, d.End)
	}
	if d.Committed {
		e.CommittedAt = d.CommittedAt
	}
	if c := d.Counts; c != nil {
		e.RowsTotal, e.RowsLoaded, e.RowsFiltered, e.RowsUnselected = c.RowsTotal, c.RowsLoaded, c.RowsFiltered, c.RowsUnselected
		e.Bytes, e.Attempts, e.DeadLettered = c.Bytes, c.Attempts, c.DeadLettered
	}
	l.stageEvidence(e)
	if l.ledger == nil {
		return
	}
	if err := l.ledger.Append(e); err != nil {
		l.log.Warn("ledger append failed", "event", event, "label", d.Label, "err", err)
	}
}

// txnEvidence appends the ledger entry (docs/design.md §6) of txn t of
// checkpoint d: one entry per txn, naming its table, label and txn id,
// with t's counts and deadLettered (the checkpoint's dead-lettered count
// rides on the entry of its first txn, deadLetteredOf). Like evidence, a
// failed append is logged, never fatal.
func (l *Loader) txnEvidence(event string, d *checkpoint.Decision, t checkpoint.Txn, deadLettered int64, state doris.TxnStatus, note string) {
	if l.ledger == nil && l.cfg.Evidence == nil {
		return
	}
	db, table, err := checkpoint.SplitTable(t.Table)
	if err != nil {
		db, table = l.cfg.DB, t.Table
	}
	e := ledger.Entry{
		Time:         l.clock.Now(),
		Event:        event,
		Checkpoint:   d.ID,
		Job:          l.cfg.Job,
		DB:           db,
		Table:        table,
		Sub:          t.Sub,
		Label:        t.Label,
		TxnID:        t.TxnID,
		State:        string(state),
		DecidedAt:    d.DecidedAt,
		Note:         note,
		DeadLettered: deadLettered,
	}
	if n := len(d.Txns); n > 1 {
		e.Txns = n
	}
	if len(d.Start) > 0 || len(d.End) > 0 {
		e.Ranges = ledger.Ranges(d.Start, d.End)
	}
	if t.Committed {
		e.CommittedAt = t.CommittedAt
	}
	if c := t.Counts; c != nil {
		e.RowsTotal, e.RowsLoaded, e.RowsFiltered, e.RowsUnselected = c.RowsTotal, c.RowsLoaded, c.RowsFiltered, c.RowsUnselected
		e.Bytes, e.Attempts = c.Bytes, c.Attempts
	}
	l.stageEvidence(e)
	if l.ledger == nil {
		return
	}
	if err := l.ledger.Append(e); err != nil {
		l.log.Warn("ledger append failed", "event", event, "label", t.Label, "err", err)
	}
}
