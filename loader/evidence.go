package loader

import (
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// tally is what a ledger entry says about a checkpoint's contents.
type tally struct {
	// res gives the row counters as Doris reported them; nil: unknown.
	res *doris.LoadResult
	// attempts counts the load attempts.
	attempts int
	// deadLettered counts the source records sent to a dead-letter topic
	// (CheckpointInfo.DeadLettered).
	deadLettered int64
}

// evidence appends one ledger entry (DESIGN.md §6) for checkpoint d. The
// ledger is evidence, not the coordinator's log: a failed append is logged,
// never fatal.
func (l *Loader) evidence(event string, d checkpoint.Decision, state doris.TxnStatus, t tally, note string) {
	if l.ledger == nil {
		return
	}
	e := ledger.Entry{
		Time:         l.clock.Now(),
		Event:        event,
		Checkpoint:   d.ID,
		Job:          l.cfg.Job,
		DB:           l.cfg.DB,
		Table:        l.cfg.Table,
		Label:        d.Label,
		TxnID:        d.TxnID,
		State:        string(state),
		DecidedAt:    d.DecidedAt,
		Attempts:     t.attempts,
		DeadLettered: t.deadLettered,
		Note:         note,
	}
	if len(d.Start) > 0 || len(d.End) > 0 {
		e.Ranges = rangesJSON(d.Start, d.End)
	}
	if d.Committed {
		e.CommittedAt = d.CommittedAt
	}
	if res := t.res; res != nil {
		e.RowsTotal = res.NumberTotalRows
		e.RowsLoaded = res.NumberLoadedRows
		e.RowsFiltered = res.NumberFilteredRows
		e.RowsUnselected = res.NumberUnselectedRows
		e.Bytes = res.LoadBytes
	}
	if err := l.ledger.Append(e); err != nil {
		l.log.Warn("ledger append failed", "event", event, "label", d.Label, "err", err)
	}
}

// rangesJSON renders {"start":…,"end":…} (null for a missing position).
func rangesJSON(start, end []byte) []byte {
	b := []byte(`{"start":`)
	b = appendRaw(b, start)
	b = append(b, `,"end":`...)
	b = appendRaw(b, end)
	return append(b, '}')
}

func appendRaw(b, v []byte) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	return append(b, v...)
}
