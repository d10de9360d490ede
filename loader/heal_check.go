package loader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// HealMismatchError refuses to decide a heal whose replay does not match
// the decision it heals, table by table: a table whose txn was aborted got
// no row, or another row count than it was decided with; or the rows
// skipped for a table whose txn is committed are not that txn's count.
// The routing changed since the decision (the rows of one table now go to
// another), or the source range was compacted or truncated: deciding the
// heal would lose rows, or load them twice. Nothing of the heal is decided
// and its loads are aborted (the error is wrapped in a *CheckpointError,
// ErrNeedRecover); every Recover heals the checkpoint again and meets the
// same refusal until the routing (or the source data) of the decision's
// time is back.
type HealMismatchError struct {
	CheckpointID uint64
	// Table ("db.table"), Sub (its sub-load), Label and TxnID name the
	// decided txn.
	Table string
	Sub   int
	Label string
	TxnID int64
	// Committed is set when that txn is committed: the replay skipped the
	// rows routed to Table. Otherwise Doris aborted it and the replay
	// loaded Table again.
	Committed bool
	// Decided is the txn's row count in the decision (LoadCounts.RowsTotal,
	// Doris's NumberTotalRows); -1 when the decision has no counts (saved by
	// a doris-sink older than them): then only a replay without any row
	// for an aborted table is refused.
	Decided int64
	// Replayed counts the rows the replay routed to Table: loaded (Doris's
	// NumberTotalRows) for an aborted txn, skipped for a committed one.
	Replayed int64
	// Start and End are the checkpoint's source positions.
	Start, End json.RawMessage
	// ReplayEnd, when set, is where the replay ended instead of End: a
	// heal that keeps committed txns must replay exactly [Start, End)
	// (their rows beyond either end would be lost or loaded twice).
	ReplayEnd json.RawMessage
}

// Error names the checkpoint, table, label, txn and both row counts (or
// both ends).
func (e *HealMismatchError) Error() string {
	if e.ReplayEnd != nil {
		return fmt.Sprintf("heal of checkpoint %d refused: the replay ends at %s but the checkpoint was decided "+
			"over [%s, %s) and table %s label %s (txn %d) is committed over that range: its rows beyond the "+
			"shorter end would be loaded twice, or those of the longer range lost; end the heal at %s",
			e.CheckpointID, posString(e.ReplayEnd), posString(e.Start), posString(e.End), e.Table, e.Label, e.TxnID,
			posString(e.End))
	}
	state, did := "aborted", "loaded"
	if e.Committed {
		state, did = "committed", "skipped (its txn is committed)"
	}
	decided := fmt.Sprint(e.Decided)
	if e.Decided < 0 {
		decided = "an unknown number of"
	}
	return fmt.Sprintf("heal of checkpoint %d refused: table %s label %s (txn %d, %s) was decided with %s rows, "+
		"the replay of [%s, %s) %s %d: the routing changed since the decision or the source range was compacted "+
		"or truncated, and deciding the heal would lose rows or load them twice; nothing is decided: restore the "+
		"routing (and source data) of the decision's time and run again",
		e.CheckpointID, e.Table, e.Label, e.TxnID, state, decided, posString(e.Start), posString(e.End), did, e.Replayed)
}

// checkHeal compares a heal's replay, ending at end, with the decision it
// heals, before anything of it is decided (docs/design.md §2): every txn
// Doris aborted must be loaded again with the rows it was decided with,
// and every committed txn must have had its rows skipped, as many as it
// holds. A decision without counts (older stores: one table, no routing)
// is checked only for an aborted table that got no row.
//
// A replay ending elsewhere than the decided end (the source's checkpoint
// boundaries moved) has nothing to compare with: it is a load of a new
// range into the aborted tables, fine when every txn of the decision is
// healed (the healed decision takes the new end); with a committed txn
// kept it is refused.
func (l *Loader) checkHeal(a *attempt, end json.RawMessage) error {
	h := a.heal
	if h == nil {
		return nil
	}
	if !samePosition(end, h.d.End) {
		for _, t := range h.d.Txns {
			if _, healed := h.tables[keyOf(t)]; !healed {
				return &HealMismatchError{CheckpointID: h.d.ID, Table: t.Table, Sub: t.Sub, Label: t.Label, TxnID: t.TxnID,
					Committed: true, Start: h.d.Start, End: h.d.End, ReplayEnd: end}
			}
		}
		return nil
	}
	var errs []error
	for _, t := range h.d.Txns {
		decided := int64(-1)
		if t.Counts != nil {
			decided = t.Counts.RowsTotal
		}
		_, healed := h.tables[keyOf(t)]
		var replayed int64
		if healed {
			if tl := a.load(keyOf(t)); tl != nil && tl.res != nil {
				replayed = tl.res.NumberTotalRows
			}
			if replayed > 0 && (decided < 0 || replayed == decided) {
				continue
			}
		} else {
			replayed = a.skipped[keyOf(t)]
			if decided < 0 {
				l.log.Warn("heal: the decision has no row counts: the rows skipped for a committed table cannot be checked",
					"id", h.d.ID, "table", t.Table, "skipped", replayed)
				continue
			}
			if replayed == decided {
				continue
			}
		}
		errs = append(errs, &HealMismatchError{CheckpointID: h.d.ID, Table: t.Table, Sub: t.Sub, Label: t.Label, TxnID: t.TxnID,
			Committed: !healed, Decided: decided, Replayed: replayed, Start: h.d.Start, End: h.d.End})
	}
	return errors.Join(errs...)
}

// samePosition reports whether source positions a and b (opaque JSON) are
// equal as JSON values (numbers compared exactly).
func samePosition(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, erra := decodeNumbers(a)
	vb, errb := decodeNumbers(b)
	return erra == nil && errb == nil && reflect.DeepEqual(va, vb)
}

func decodeNumbers(p json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
