package verify

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/cmdutil"
	"github.com/doris-sink/doris-sink/doris"
	"github.com/doris-sink/doris-sink/doris/schema"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

func findings(r *Report, kind string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// A PREPARE or PRECOMMITTED txn of the job's prefix older than the
// checkpoint interval + margin is a gap naming label, txn, state and age;
// a young one, or another prefix's, is not.
func TestReconcileFindsLingeringTxns(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.Local)
	d := visible(1)
	d.running = []doris.Transaction{
		{ID: 7, Label: "job:demo-t:0:3", Status: doris.TxnPrecommitted, PrepareTime: now.Add(-10 * time.Minute)},
		{ID: 8, Label: "job:demo-t:0:4", Status: doris.TxnPrepare, PrepareTime: now.Add(-time.Hour)},
		{ID: 9, Label: "job:demo-t:0:5", Status: doris.TxnPrepare, PrepareTime: now.Add(-30 * time.Second)},
		{ID: 10, Label: "other:demo-t:0:1", Status: doris.TxnPrecommitted, PrepareTime: now.Add(-time.Hour)},
		{ID: 11, Label: "jobs:demo-t:0:1", Status: doris.TxnPrecommitted, PrepareTime: now.Add(-time.Hour)},
	}
	in := input(committed(1, nil, map[int32]int64{0: 10}, 10), d, fakeKafka{0: 10})
	in.LingerAfter = 10*time.Second + DefaultLingerMargin
	in.Now = func() time.Time { return now }
	rep := Reconcile(t.Context(), in)
	got := findings(rep, KindLingering)
	if len(got) != 2 {
		t.Fatalf("lingering findings = %v, want txns 8 and 7", got)
	}
	var ge *cmdutil.GapsError
	if !errors.As(rep.Err(), &ge) || ge.Gaps != 2 {
		t.Errorf("Err() = %v, want 2 gaps", rep.Err())
	}
	for _, want := range []struct {
		label, frag string
		cp          uint64
	}{
		{"job:demo-t:0:4", "txn 8 of label job:demo-t:0:4 is still PREPARE 1h0m0s", 4},
		{"job:demo-t:0:3", "txn 7 of label job:demo-t:0:3 is still PRECOMMITTED 10m0s", 3},
	} {
		found := false
		for _, f := range got {
			if f.Label == want.label && f.Checkpoint == want.cp && f.Severity == SeverityGap && strings.Contains(f.Message, want.frag) {
				found = true
			}
		}
		if !found {
			t.Errorf("no gap for %s containing %q in %v", want.label, want.frag, got)
		}
	}

	in.LingerAfter = 0 // off
	if rep := Reconcile(t.Context(), in); len(findings(rep, KindLingering)) != 0 {
		t.Errorf("LingerAfter 0 still checked: %v", rep.Findings)
	}
}

// A DUPLICATE KEY table's COUNT(*) must equal the loaded rows of the
// committed checkpoints; UNIQUE/AGGREGATE tables are skipped with a note.
func TestReconcileTableCount(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10}, 10)...)
	es = append(es, committed(2, map[int32]int64{0: 10}, map[int32]int64{0: 25}, 15)...)
	run := func(keys schema.KeysType, count int64, on bool) *Report {
		d := visible(1, 2)
		d.keys, d.count = keys, count
		in := input(es, d, fakeKafka{0: 25})
		in.TableCount = on
		return Reconcile(t.Context(), in)
	}

	rep := run(schema.DuplicateKeys, 25, true)
	if rep.Err() != nil || rep.TableCount == nil || rep.TableCount.Status != TableCountOK || rep.TableCount.Rows != 25 {
		t.Errorf("matching count: %v %+v %v", rep.Err(), rep.TableCount, rep.Findings)
	}

	rep = run(schema.DuplicateKeys, 24, true)
	got := findings(rep, KindTableCount)
	if len(got) != 1 || got[0].Severity != SeverityGap || !strings.Contains(got[0].Message, "has 24 rows, the committed checkpoints loaded 25: 1 rows lost") {
		t.Fatalf("count mismatch findings = %v", got)
	}
	var ge *cmdutil.GapsError
	if !errors.As(rep.Err(), &ge) {
		t.Errorf("Err() = %v, want a gap", rep.Err())
	}
	if tc := rep.TableCount; tc.Status != TableCountMismatch || tc.Rows != 24 || tc.LedgerRows != 25 {
		t.Errorf("table_count = %+v", tc)
	}

	for _, keys := range []schema.KeysType{schema.UniqueKeys, schema.AggregateKeys} {
		rep = run(keys, 3, true)
		if rep.Err() != nil || rep.TableCount.Status != TableCountSkipped || !strings.Contains(rep.TableCount.Note, string(keys)+" KEY") {
			t.Errorf("%s: %v %+v", keys, rep.Err(), rep.TableCount)
		}
	}
	rep = run(schema.DuplicateKeys, 3, false)
	if rep.Err() != nil || rep.TableCount.Status != TableCountSkipped {
		t.Errorf("--table-count=false: %v %+v", rep.Err(), rep.TableCount)
	}
}

// Against the emulator (docs/doris-facts.md §6.2 SHOW TRANSACTION WHERE status,
// §7 Duplicate Key): a ledger claiming more rows than the table holds and a
// PRECOMMITTED txn left behind are both gaps.
func TestReconcileDorisChecksEmulator(t *testing.T) {
	t.Parallel()
	_, c := cmdutil.NewTestDoris(t, `CREATE TABLE t (id BIGINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1")`)
	ctx := context.Background()
	load := func(label string) int64 {
		t.Helper()
		req := doris.LoadRequest{DB: "demo", Table: "t", Label: label, Format: "json", ReadJSONByLine: true, TwoPhaseCommit: true}
		res, err := c.StreamLoad(ctx, req, strings.NewReader("{\"id\":1}\n{\"id\":2}\n"))
		if err != nil {
			t.Fatalf("load %s: %v", label, err)
		}
		return res.TxnID
	}
	id := load("job:demo-t:0:1")
	if err := c.CommitTxn(ctx, "demo", id); err != nil {
		t.Fatal(err)
	}
	left := load("job:demo-t:0:2") // precommitted, never decided

	rg := []byte(`{"start":null,"end":{"topic":"orders","offsets":{"0":2}}}`)
	entries := func(loaded int64) []ledger.Entry {
		return []ledger.Entry{
			{Event: ledger.EventDecided, Checkpoint: 1, Label: "job:demo-t:0:1", TxnID: id, Ranges: rg, RowsTotal: 2, RowsLoaded: loaded},
			{Event: ledger.EventCommitted, Checkpoint: 1, Label: "job:demo-t:0:1", TxnID: id, Ranges: rg, State: "VISIBLE"},
		}
	}
	in := Input{Job: "job", DB: "demo", Table: "t", Entries: entries(2), Doris: c, Kafka: fakeKafka{0: 2},
		TableCount: true, LingerAfter: time.Minute}
	// Now: when the leftover txn began (no lingering yet).
	in.Now = time.Now
	rep := Reconcile(ctx, in)
	if rep.Err() != nil || rep.TableCount.Status != TableCountOK || rep.TableCount.Rows != 2 {
		t.Fatalf("clean: %v %+v %v", rep.Err(), rep.TableCount, rep.Findings)
	}

	in.Entries = entries(3) // rows total 2 but the ledger claims 3 loaded
	in.Now = func() time.Time { return time.Now().Add(time.Hour) }
	rep = Reconcile(ctx, in)
	tc := findings(rep, KindTableCount)
	if len(tc) != 1 || tc[0].Severity != SeverityGap || rep.TableCount.Rows != 2 || rep.TableCount.LedgerRows != 3 {
		t.Errorf("table count: %v %+v", tc, rep.TableCount)
	}
	lg := findings(rep, KindLingering)
	if len(lg) != 1 || lg[0].Label != "job:demo-t:0:2" || !strings.Contains(lg[0].Message, "PRECOMMITTED") ||
		!strings.Contains(lg[0].Message, "txn "+strconv.FormatInt(left, 10)) {
		t.Errorf("lingering: %v", lg)
	}
	if cmdutil.ExitCode(rep.Err()) != cmdutil.ExitGaps {
		t.Errorf("exit code %d, want %d", cmdutil.ExitCode(rep.Err()), cmdutil.ExitGaps)
	}
}

// Issue 20, the settle rule for a running job: checkpoint 3 is decided
// after the first evidence read (E1) and committed before the count, so
// COUNT(*) is above E1's committed rows; the second read (E2) holds its
// decision, and a count within [E1 committed, E2 decided] passes. A count
// above E2's decided rows is extra rows, a gap; so is one below E1's.
func TestReconcileTableCountSettles(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10}, 10)...)
	es = append(es, committed(2, map[int32]int64{0: 10}, map[int32]int64{0: 25}, 15)...)
	e2 := append(append([]ledger.Entry{}, es...), committed(3, map[int32]int64{0: 25}, map[int32]int64{0: 30}, 5)[0])
	run := func(count int64) *Report {
		d := visible(1, 2)
		d.keys, d.count = schema.DuplicateKeys, count
		in := input(es, d, fakeKafka{0: 30})
		in.TableCount = true
		in.Reread = func(context.Context) ([]*record, error) { return fold(e2), nil }
		return Reconcile(t.Context(), in)
	}
	if rep := run(30); rep.Err() != nil || rep.TableCount.Status != TableCountOK || !strings.Contains(rep.TableCount.Note, "settled") {
		t.Errorf("count 30 within [25, 30]: %v %+v", rep.Err(), rep.TableCount)
	}
	rep := run(31)
	var ge *cmdutil.GapsError
	if !errors.As(rep.Err(), &ge) || !strings.Contains(rep.TableCount.Note, "1 extra rows") {
		t.Errorf("count 31 above E2's 30: %v %+v, want a gap of 1 extra rows", rep.Err(), rep.TableCount)
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.String(), "gap gap") || strings.Contains(f.Message, "rows lost") {
			t.Errorf("finding %q: extra rows are not 'rows lost', and a gap is named once", f)
		}
	}
	if rep := run(24); !errors.As(rep.Err(), &ge) || !strings.Contains(rep.TableCount.Note, "1 rows lost") {
		t.Errorf("count 24 below E1's 25: %v %+v, want a gap of 1 rows lost", rep.Err(), rep.TableCount)
	}
}

// Issue 20: a UNIQUE or AGGREGATE KEY table's count is not compared for
// equality (merging lowers it), but it never exceeds the rows the
// evidence's checkpoints loaded: more is extra rows, a gap.
func TestReconcileMergedTableUpperBound(t *testing.T) {
	t.Parallel()
	var es []ledger.Entry
	es = append(es, committed(1, nil, map[int32]int64{0: 10}, 10)...)
	for _, keys := range []schema.KeysType{schema.UniqueKeys, schema.AggregateKeys} {
		d := visible(1)
		d.keys, d.count = keys, 11
		in := input(es, d, fakeKafka{0: 10})
		in.TableCount = true
		rep := Reconcile(t.Context(), in)
		var ge *cmdutil.GapsError
		if !errors.As(rep.Err(), &ge) || !strings.Contains(rep.TableCount.Note, "1 extra rows") {
			t.Errorf("%s with 11 rows for 10 loaded: %v %+v, want a gap of 1 extra rows", keys, rep.Err(), rep.TableCount)
		}
		d.count = 7
		in.Doris = d
		if rep := Reconcile(t.Context(), in); rep.Err() != nil || rep.TableCount.Status != TableCountSkipped {
			t.Errorf("%s with 7 rows (merged): %v %+v, want skipped", keys, rep.Err(), rep.TableCount)
		}
	}
}
