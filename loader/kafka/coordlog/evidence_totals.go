package coordlog

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/ledger"
)

// EvidenceTotals are a writer scope's cumulative totals (docs/design.md
// §7.3 "Retention"): what the scope's committed checkpoints loaded, per
// target table, counted from checkpoint Since on. A slot's evidence
// record carries the totals *before* its own entries, so the first
// record a retention left is the baseline of everything that expired
// before it; EvidenceTotals.Add of the record's entries gives the totals
// after it, which is what the next incarnation of the scope starts from
// (the Log reads the last record of its scope at open).
type EvidenceTotals struct {
	// Since is the first checkpoint the totals count: 1 when they count
	// the scope from its start; a later one when the scope's first
	// evidence record with totals was written by a job that had decided
	// checkpoints before (an upgrade from a doris-sink without totals):
	// checkpoints before Since are in no total.
	Since uint64 `json:"since"`
	// Through is the last checkpoint a committed entry counted (0: none).
	Through uint64 `json:"through"`
	// Tables are the totals per target table, keyed "db.table".
	Tables map[string]TableTotals `json:"tables,omitempty"`
}

// TableTotals are the cumulative counts of one target table.
type TableTotals struct {
	// RowsLoaded sums the rows_loaded of every committed txn.
	RowsLoaded int64 `json:"rows_loaded"`
	// DeadLettered sums the dead-lettered source records of the
	// committed checkpoints (counted on their first txn's table).
	DeadLettered int64 `json:"dead_lettered"`
}

// Clone returns a deep copy of t.
func (t EvidenceTotals) Clone() EvidenceTotals {
	c := t
	c.Tables = make(map[string]TableTotals, len(t.Tables))
	for k, v := range t.Tables {
		c.Tables[k] = v
	}
	return c
}

// Add counts entries into t: each "committed" entry (one per txn, written
// once, in the transaction that records the commit) adds its rows_loaded
// and dead_lettered to its table. Decided, healed, aborted and resolved
// entries add nothing (a resolution carries no row counts).
func (t *EvidenceTotals) Add(entries []ledger.Entry) {
	for _, e := range entries {
		if e.Event != ledger.EventCommitted || e.Checkpoint == 0 {
			continue
		}
		if t.Since == 0 {
			t.Since = e.Checkpoint
		}
		if t.Tables == nil {
			t.Tables = map[string]TableTotals{}
		}
		k := e.DB + "." + e.Table
		tt := t.Tables[k]
		tt.RowsLoaded += e.RowsLoaded
		tt.DeadLettered += e.DeadLettered
		t.Tables[k] = tt
		t.Through = max(t.Through, e.Checkpoint)
	}
}

// evidenceTailWindow is how many offsets the first backward step of
// lastEvidenceOf reads; each further step doubles it.
const evidenceTailWindow = 64

// lastEvidenceOf returns the last slot record of key in the job's
// evidence topic (nil when there is none), read backward from the last
// stable offset in growing windows, so a writer learns its scope's totals
// without reading the topic's history. Only records a committed
// transaction wrote are seen (read_committed).
func (l *Log) lastEvidenceOf(ctx context.Context, key string) (*EvidenceRecord, error) {
	topic := EvidenceTopic(l.cfg.Job)
	starts, err := l.adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("evidence topic %s: log start offset: %w", topic, err)
	}
	so, _ := starts.Lookup(topic, 0)
	end, err := lastStable(ctx, l.adm, l.cfg.Job, topic)
	if err != nil {
		return nil, err
	}
	hi, window := end, int64(evidenceTailWindow)
	for hi > so.Offset {
		lo := max(so.Offset, hi-window)
		var last *EvidenceRecord
		err := scanFrom(ctx, l.cfg.ClientOpts, topic, lo, hi, func(r *kgo.Record) error {
			if string(r.Key) != key {
				return nil
			}
			rec, err := decodeEvidence(topic, r)
			if err != nil {
				return err
			}
			if rec.Writer == EvidenceWriterSlot {
				last = &rec
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if last != nil {
			return last, nil
		}
		hi, window = lo, window*2
	}
	return nil, nil
}
