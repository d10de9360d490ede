package verify

import (
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// After retention, the baseline is the sum over the writer slots of the
// totals before each one's first retained record, plus a removed slot's
// totals after its last record; a slot whose totals start mid-history
// (or that has none) makes the count "not compared", never a gap.
func TestRetentionBaseline(t *testing.T) {
	tot := func(since uint64, rows int64) *coordlog.EvidenceTotals {
		return &coordlog.EvidenceTotals{Since: since, Through: 3, Tables: map[string]coordlog.TableTotals{"db.t": {RowsLoaded: rows}}}
	}
	committed := []ledger.Entry{{Event: ledger.EventCommitted, Checkpoint: 4, DB: "db", Table: "t", RowsLoaded: 7}}
	slot := func(scope string, off int64, t *coordlog.EvidenceTotals, es []ledger.Entry) coordlog.EvidenceRecord {
		return coordlog.EvidenceRecord{Writer: coordlog.EvidenceWriterSlot, Scope: scope, Offset: off, Totals: t, Entries: es}
	}
	el := &coordlog.EvidenceLog{Topic: "doris-sink.evidence.j", LogStart: 10, Records: []coordlog.EvidenceRecord{
		slot("0", 10, tot(1, 100), committed), slot("1", 11, tot(1, 50), nil), slot("2", 12, tot(1, 20), committed),
		slot("0", 13, tot(1, 107), nil),
	}}
	out := &evidenceInputs{}
	if why := out.retentionBaseline(el, 2); why != "" || out.baseline["db.t"] != 100+50+27 {
		t.Fatalf("baseline %v (%q), want 177: slot 0's 100 and slot 1's 50 before their first records, removed slot 2's 27 after its last",
			out.baseline, why)
	}
	el.Records[1].Totals = tot(4, 50)
	if why := (&evidenceInputs{}).retentionBaseline(el, 2); !strings.Contains(why, "writer slot 1's cumulative totals start at checkpoint 4") {
		t.Errorf("totals from checkpoint 4: %q, want the count not compared, naming slot 1", why)
	}
	el.Records[1].Totals = nil
	if why := (&evidenceInputs{}).retentionBaseline(el, 2); !strings.Contains(why, "carries no cumulative totals") {
		t.Errorf("record without totals: %q, want the count not compared", why)
	}
}
