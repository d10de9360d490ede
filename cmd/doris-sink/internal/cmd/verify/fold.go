package verify

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// record is everything the ledger says about one checkpoint (or, in
// txns, about one of its txns).
type record struct {
	id uint64
	// db and table name the txn's table (from the entries).
	db, table string
	// txns are the checkpoint's txns, one record per label, when it has
	// several (a checkpoint of several tables); the checkpoint's rows are
	// then their sum, it is loaded when all are.
	txns    []*record
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

// fold groups ledger entries by checkpoint id, in id order, and within a
// checkpoint by label (one txn per table). Entries of checkpoints never
// decided (aborted attempts) are dropped.
func fold(entries []ledger.Entry) []*record {
	byID := map[uint64]map[string]*record{}
	var order []uint64
	var labels = map[uint64][]string{}
	for _, e := range entries {
		subs := byID[e.Checkpoint]
		if subs == nil {
			subs = map[string]*record{}
			byID[e.Checkpoint] = subs
			order = append(order, e.Checkpoint)
		}
		r := subs[e.Label]
		if r == nil {
			r = &record{id: e.Checkpoint}
			subs[e.Label] = r
			labels[e.Checkpoint] = append(labels[e.Checkpoint], e.Label)
		}
		foldEntry(r, e)
	}
	out := make([]*record, 0, len(byID))
	for _, id := range order {
		var subs []*record
		for _, l := range labels[id] {
			if r := byID[id][l]; r.decided {
				subs = append(subs, r)
			}
		}
		switch len(subs) {
		case 0:
		case 1:
			out = append(out, subs[0])
		default:
			out = append(out, merged(subs))
		}
	}
	slices.SortFunc(out, func(a, b *record) int { return cmp.Compare(a.id, b.id) })
	return out
}

// foldEntry applies one ledger entry to the record of its txn.
func foldEntry(r *record, e ledger.Entry) {
	r.label, r.last = e.Label, e.Event
	r.db, r.table = e.DB, e.Table
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

// merged is the record of a checkpoint of several txns: named by its
// first txn, rows and dead letters summed (each dead letter is on one
// txn's entries), loaded when every txn is.
func merged(subs []*record) *record {
	m := *subs[0]
	m.txns = subs
	m.loaded, m.counts, m.rows, m.deadLettered = true, false, rowCounts{}, 0
	for _, s := range subs {
		m.loaded = m.loaded && s.loaded
		m.healed = m.healed || s.healed
		if notNull(s.end) {
			m.start, m.end = s.start, s.end
		}
		if s.counts {
			m.counts = true
			m.rows.total += s.rows.total
			m.rows.loaded += s.rows.loaded
			m.rows.filtered += s.rows.filtered
			m.rows.unselected += s.rows.unselected
			m.deadLettered += s.deadLettered
		}
	}
	return &m
}

// txnRecords returns r's txns: itself when it has one.
func (r *record) txnRecords() []*record {
	if len(r.txns) > 0 {
		return r.txns
	}
	return []*record{r}
}

func notNull(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
