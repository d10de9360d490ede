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
	if why := out.retentionBaseline(el, 2, true); why != "" || out.baseline["db.t"] != 100+50+27 {
		t.Fatalf("baseline %v (%q), want 177: slot 0's 100 and slot 1's 50 before their first records, removed slot 2's 27 after its last",
			out.baseline, why)
	}
	el.Records[1].Totals = tot(4, 50)
	if why := (&evidenceInputs{}).retentionBaseline(el, 2, true); !strings.Contains(why, "writer slot 1's cumulative totals start at checkpoint 4") {
		t.Errorf("totals from checkpoint 4: %q, want the count not compared, naming slot 1", why)
	}
	el.Records[1].Totals = nil
	if why := (&evidenceInputs{}).retentionBaseline(el, 2, true); !strings.Contains(why, "carries no cumulative totals") {
		t.Errorf("record without totals: %q, want the count not compared", why)
	}
}

// Nothing expired, after a `checkpoint reslot` removed slot 2: the current
// slots' entries are folded whole (no baseline of theirs), and slot 2's
// committed rows, whose entries verify does not fold, come from its totals
// after its last record. Without them the table count read them as extra
// rows.
func TestRemovedSlotBaselineWithoutRetention(t *testing.T) {
	tot := func(rows int64) *coordlog.EvidenceTotals {
		return &coordlog.EvidenceTotals{Since: 1, Through: 3, Tables: map[string]coordlog.TableTotals{"db.t": {RowsLoaded: rows}}}
	}
	committed := []ledger.Entry{{Event: ledger.EventCommitted, Checkpoint: 4, DB: "db", Table: "t", RowsLoaded: 7}}
	slot := func(scope string, off int64, t *coordlog.EvidenceTotals, es []ledger.Entry) coordlog.EvidenceRecord {
		return coordlog.EvidenceRecord{Writer: coordlog.EvidenceWriterSlot, Scope: scope, Offset: off, Totals: t, Entries: es}
	}
	el := &coordlog.EvidenceLog{Topic: "doris-sink.evidence.j", Records: []coordlog.EvidenceRecord{
		slot("0", 0, tot(0), committed), slot("2", 1, tot(0), committed), slot("2", 2, tot(7), committed), slot("1", 3, tot(0), nil),
	}}
	out := &evidenceInputs{}
	if why := out.retentionBaseline(el, 2, false); why != "" || out.baseline["db.t"] != 14 {
		t.Fatalf("baseline %v (%q), want 14: removed slot 2's totals after its last record, nothing of slots 0 and 1", out.baseline, why)
	}
	el.Records[2].Totals = nil
	if why := (&evidenceInputs{}).retentionBaseline(el, 2, false); !strings.Contains(why, "writer slot 2, removed by `checkpoint reslot`, carries no cumulative totals") {
		t.Errorf("removed slot without totals: %q, want the count not compared", why)
	}
}
