package verify

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"

	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

type fakeDoris struct {
	states map[string]doris.TxnStatus
	txns   map[string]int64
	// running answers TransactionsByStatus (filtered by status).
	running []doris.Transaction
	// keys and count describe the table.
	keys  schema.KeysType
	count int64
}

func (f fakeDoris) TransactionsByStatus(_ context.Context, _ string, st doris.TxnStatus) ([]doris.Transaction, error) {
	out := []doris.Transaction{}
	for _, t := range f.running {
		if t.Status == st {
			out = append(out, t)
		}
	}
	return out, nil
}

func (f fakeDoris) ShowCreateTable(_ context.Context, db, table string) (*schema.Table, error) {
	return &schema.Table{Database: db, Name: table, Keys: f.keys}, nil
}

func (f fakeDoris) TableRowCount(context.Context, string, string) (int64, error) { return f.count, nil }

func (f fakeDoris) LoadState(_ context.Context, _, label string) (doris.TxnStatus, error) {
	if st, ok := f.states[label]; ok {
		return st, nil
	}
	return doris.TxnUnknown, nil
}

func (f fakeDoris) TransactionByLabel(_ context.Context, _, label string) (*doris.Transaction, error) {
	id, ok := f.txns[label]
	if !ok {
		return nil, errors.New("transaction with label " + label + " does not exist")
	}
	return &doris.Transaction{ID: id, Label: label, Status: doris.TxnVisible}, nil
}

type fakeKafka map[int32]int64

func (k fakeKafka) HighWatermarks(context.Context, string) (map[int32]int64, error) { return k, nil }

// CountRange: every offset holds a data record.
func (k fakeKafka) CountRange(_ context.Context, _ string, _ int32, start, end int64) (RangeCount, error) {
	return RangeCount{Records: end - start}, nil
}

func pos(offs map[int32]int64) string {
	if offs == nil {
		return "null"
	}
	s := `{"topic":"orders","offsets":{`
	first := true
	for _, p := range sortedParts(offs) {
		if !first {
			s += ","
		}
		first = false
		s += fmt.Sprintf(`"%d":%d`, p, offs[p])
	}
	return s + "}}"
}

// committed returns the decided + committed ledger entries of one checkpoint
// loading rows rows.
func committed(id uint64, start, end map[int32]int64, rows int64) []ledger.Entry {
	lbl := fmt.Sprintf("job:demo.t:0:%d", id)
	rg := []byte(`{"start":` + pos(start) + `,"end":` + pos(end) + `}`)
	return []ledger.Entry{
		{Event: ledger.EventDecided, Checkpoint: id, Label: lbl, TxnID: int64(100 + id), Ranges: rg,
			RowsTotal: rows, RowsLoaded: rows},
		{Event: ledger.EventCommitted, Checkpoint: id, Label: lbl, TxnID: int64(100 + id), Ranges: rg, State: "VISIBLE"},
	}
}

func visible(ids ...uint64) fakeDoris {
	f := fakeDoris{states: map[string]doris.TxnStatus{}, txns: map[string]int64{}}
	for _, id := range ids {
		lbl := fmt.Sprintf("job:demo.t:0:%d", id)
		f.states[lbl] = doris.TxnVisible
		f.txns[lbl] = int64(100 + id)
	}
	return f
}

func input(entries []ledger.Entry, d Doris, k Kafka) Input {
	return Input{Job: "job", DB: "demo", Table: "t", Entries: entries, Doris: d, Kafka: k}
}

func kinds(r *Report, s Severity) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Severity == s {
			out = append(out, f.Kind)
		}
	}
	return out
}

func TestReconcileCleanLedger(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10, 1: 5}, 15)...)
	es = append(es, committed(2, map[int32]int64{0: 10, 1: 5}, map[int32]int64{0: 20, 1: 5}, 10)...)
	rep := Reconcile(t.Context(), input(es, visible(1, 2), fakeKafka{0: 20, 1: 5}))
	if err := rep.Err(); err != nil {
		t.Fatalf("clean ledger: %v; findings %v", err, rep.Findings)
	}
	if len(rep.Findings) != 0 {
		t.Errorf("findings = %v, want none", rep.Findings)
	}
	if rep.RowsLoaded != 25 || rep.Offsets != 25 {
		t.Errorf("rows %d offsets %d, want 25 and 25", rep.RowsLoaded, rep.Offsets)
	}
	if len(rep.Checkpoints) != 2 || rep.Checkpoints[1].Status != "OK" || rep.Checkpoints[1].Doris != "VISIBLE" {
		t.Errorf("checkpoints = %+v", rep.Checkpoints)
	}
}

func TestReconcileFindsGapAndOverlap(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10, 1: 5}, 15)...)
	// partition 0 skips [10,12); partition 1 replays [3,5).
	es = append(es, committed(2, map[int32]int64{0: 12, 1: 3}, map[int32]int64{0: 20, 1: 6}, 11)...)
	rep := Reconcile(t.Context(), input(es, visible(1, 2), fakeKafka{0: 20, 1: 6}))
	var ge *cmdutil.GapsError
	if !errors.As(rep.Err(), &ge) || ge.Gaps != 2 {
		t.Fatalf("Err() = %v, want a GapsError with 2 gaps", rep.Err())
	}
	got := kinds(rep, SeverityGap)
	if len(got) != 2 || got[0] != KindGap || got[1] != KindOverlap {
		t.Errorf("gap findings = %v, want [gap overlap]", got)
	}
	if rep.Checkpoints[1].Status != string(SeverityGap) {
		t.Errorf("checkpoint 2 status = %s, want gap", rep.Checkpoints[1].Status)
	}
}

func TestReconcileFindsPartitionDropped(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10, 1: 5}, 15)...)
	es = append(es, committed(2, map[int32]int64{0: 10}, map[int32]int64{0: 20}, 10)...)
	rep := Reconcile(t.Context(), input(es, visible(1, 2), fakeKafka{0: 20, 1: 5}))
	if got := kinds(rep, SeverityGap); len(got) != 1 || got[0] != KindGap {
		t.Errorf("gap findings = %v, want [gap]", got)
	}
}

func TestReconcileDorisMismatch(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10}, 10)...)
	es = append(es, committed(2, map[int32]int64{0: 10}, map[int32]int64{0: 20}, 10)...)
	es = append(es, committed(3, map[int32]int64{0: 20}, map[int32]int64{0: 30}, 10)...)
	d := visible(1, 2, 3)
	d.states["job:demo.t:0:2"] = doris.TxnAborted // decided, lost in Doris
	d.txns["job:demo.t:0:3"] = 999                // another writer's txn
	rep := Reconcile(t.Context(), input(es, d, fakeKafka{0: 30}))
	if got := kinds(rep, SeverityGap); len(got) != 1 || got[0] != KindState {
		t.Errorf("gap findings = %v, want [state]", got)
	}
	if got := kinds(rep, SeverityError); len(got) != 1 || got[0] != KindTxn {
		t.Errorf("error findings = %v, want [txn]", got)
	}
}

func TestReconcileRowsAndHighWatermark(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10}, 9)...) // one row short
	rep := Reconcile(t.Context(), input(es, visible(1), fakeKafka{0: 8}))
	if got := kinds(rep, SeverityError); len(got) != 1 || got[0] != KindHighWatermark {
		t.Errorf("error findings = %v, want [high-watermark]", got)
	}
	// Kafka holds a record at every offset: the missing row is a gap.
	if got := kinds(rep, SeverityGap); len(got) != 1 || got[0] != KindRows {
		t.Errorf("gap findings = %v, want [rows]", got)
	}
	if cmdutil.ExitCode(rep.Err()) != cmdutil.ExitGaps {
		t.Errorf("exit code %d for a missing row, want %d", cmdutil.ExitCode(rep.Err()), cmdutil.ExitGaps)
	}
	// An endpoint mismatch alone is an error (exit 1).
	es = committed(1, nil, map[int32]int64{0: 10}, 10)
	rep = Reconcile(t.Context(), input(es, visible(1), fakeKafka{0: 8}))
	if cmdutil.ExitCode(rep.Err()) != cmdutil.ExitError {
		t.Errorf("exit code %d for mismatches, want %d", cmdutil.ExitCode(rep.Err()), cmdutil.ExitError)
	}
}

func TestReconcileUncommittedAndExpired(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10}, 10)...)
	es = append(es, committed(2, map[int32]int64{0: 10}, map[int32]int64{0: 20}, 10)[0]) // decided only
	d := visible()
	d.states["job:demo.t:0:2"] = doris.TxnPrecommitted // label 1 expired: UNKNOWN
	rep := Reconcile(t.Context(), input(es, d, nil))
	if err := rep.Err(); err != nil {
		t.Errorf("Err() = %v, want warnings only: %v", err, rep.Findings)
	}
	if got := kinds(rep, SeverityWarning); len(got) != 3 {
		t.Errorf("warnings = %v, want unverifiable label, pending commit, Kafka not checked", got)
	}
}

func TestReconcileIgnoresAbortedAttempts(t *testing.T) {
	t.Parallel()
	es := []ledger.Entry{{Event: ledger.EventAborted, Checkpoint: 1, Label: "job:demo.t:0:1",
		Ranges: []byte(`{"start":null,"end":null}`)}}
	es = append(es, committed(2, nil, map[int32]int64{0: 10}, 10)...)
	rep := Reconcile(t.Context(), input(es, visible(2), fakeKafka{0: 10}))
	if len(rep.Checkpoints) != 1 || rep.Err() != nil {
		t.Errorf("checkpoints %+v findings %v, want checkpoint 2 only and no findings", rep.Checkpoints, rep.Findings)
	}
}
