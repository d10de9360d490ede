package verify

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// record is everything the ledger says about one checkpoint.
type record struct {
	id      uint64
	label   string
	txnID   int64 // of the latest entry naming one (a heal has a new txn)
	last    string
	decided bool // a decided, committed, healed or resolved entry exists
	loaded  bool // committed, or resolved as visible
	healed  bool
	start   json.RawMessage
	end     json.RawMessage
	counts  bool // a load result was recorded
	rows    rowCounts
	// deadLettered is the ledger's count of the checkpoint's records sent
	// to the dead-letter topic (of its latest entry that names counts).
	deadLettered int64
}

// rowCounts are Doris's counters of one load.
type rowCounts struct{ total, loaded, filtered, unselected int64 }

// ranges is the Entry.Ranges document.
type ranges struct {
	Start json.RawMessage `json:"start"`
	End   json.RawMessage `json:"end"`
}

// fold groups ledger entries by checkpoint id, in id order. Entries of
// checkpoints never decided (aborted attempts) are dropped.
func fold(entries []ledger.Entry) []*record {
	byID := map[uint64]*record{}
	for _, e := range entries {
		r := byID[e.Checkpoint]
		if r == nil {
			r = &record{id: e.Checkpoint}
			byID[e.Checkpoint] = r
		}
		r.label, r.last = e.Label, e.Event
		if e.TxnID != 0 {
			r.txnID = e.TxnID
		}
		switch e.Event {
		case ledger.EventDecided:
			r.decided = true
		case ledger.EventCommitted:
			r.decided, r.loaded = true, true
		case ledger.EventHealed:
			r.decided, r.healed = true, true
		case ledger.EventResolved:
			r.decided = true
			r.loaded = e.State != string(doris.TxnAborted)
		}
		if len(e.Ranges) > 0 && e.Event != ledger.EventAborted {
			var rg ranges
			if json.Unmarshal(e.Ranges, &rg) == nil && (notNull(rg.Start) || notNull(rg.End)) {
				r.start, r.end = rg.Start, rg.End
			}
		}
		if e.RowsTotal > 0 || e.RowsLoaded > 0 || e.Bytes > 0 || e.DeadLettered > 0 {
			r.counts = true
			r.rows = rowCounts{e.RowsTotal, e.RowsLoaded, e.RowsFiltered, e.RowsUnselected}
			r.deadLettered = e.DeadLettered
		}
	}
	out := make([]*record, 0, len(byID))
	for _, r := range byID {
		if r.decided {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *record) int { return cmp.Compare(a.id, b.id) })
	return out
}

func notNull(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
