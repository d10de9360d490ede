package coordlog

import (
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
)

// totalsAfter returns the totals after the last record of scope.
func totalsAfter(t *testing.T, cfg StoreConfig, scope string) (EvidenceTotals, []EvidenceRecord) {
	t.Helper()
	el, err := ReadEvidence(ctxT(t), cfg.Owner.Job, cfg.Log.ClientOpts, EvidenceReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recs := el.RecordsOf(scope)
	if len(recs) == 0 || recs[len(recs)-1].Totals == nil {
		t.Fatalf("scope %s: no record with totals in %+v", scope, recs)
	}
	last := recs[len(recs)-1]
	tot := last.Totals.Clone()
	tot.Add(last.Entries)
	return tot, recs
}

// Each slot record carries the scope's cumulative totals before its
// entries; a new incarnation (the one that fenced a writer that stopped
// between its decision and its commit mark) continues them from the last
// record of its scope, so the checkpoint committed after the takeover is
// counted once, and the earlier ones are not counted again.
func TestEvidenceTotalsContinueAcrossIncarnations(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	ctx := ctxT(t)
	cfg := storeConfig(c, "tot")
	decideRows := func(st *checkpoint.State, off int64, rows, dead int64) {
		decide(t, st, map[int32]int64{0: off})
		st.Decided.Counts = &checkpoint.LoadCounts{RowsTotal: rows, RowsLoaded: rows, DeadLettered: dead}
		st.Decided.Txns = []checkpoint.Txn{{Table: "db.t", Label: st.Decided.Label, TxnID: st.Decided.TxnID,
			Counts: &checkpoint.LoadCounts{RowsTotal: rows, RowsLoaded: rows}}}
	}
	commit := func(st *checkpoint.State) {
		st.Decided.Committed, st.Decided.CommittedAt = true, time.Now()
		st.Decided.Txns = nil
	}
	s := mustOpenStore(t, cfg)
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decideRows(st, 5, 10, 2)
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	commit(st)
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	decideRows(st, 9, 4, 0)
	if err := s.Save(ctx, st); err != nil {
		t.Fatal(err)
	}
	// The first writer stops here: checkpoint 2 decided, its commit not
	// recorded. The next owner fences it and records the commit.
	s2 := mustOpenStore(t, cfg)
	if s2.totals == nil || s2.totals.Tables["db.t"].RowsLoaded != 10 || s2.totals.Through != 1 {
		t.Fatalf("totals learned at open: %+v, want 10 rows through checkpoint 1", s2.totals)
	}
	st2, err := s2.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, st2); err == nil {
		t.Fatal("the fenced writer saved")
	}
	commit(st2)
	if err := s2.Save(ctx, st2); err != nil {
		t.Fatal(err)
	}
	tot, recs := totalsAfter(t, cfg, "0")
	if got := tot.Tables["db.t"]; got.RowsLoaded != 14 || got.DeadLettered != 2 || tot.Since != 1 || tot.Through != 2 {
		t.Fatalf("totals after the takeover: %+v, want 14 rows, 2 dead-lettered, checkpoints 1-2", tot)
	}
	if r := recs[len(recs)-1]; r.Totals.Tables["db.t"].RowsLoaded != 10 || events(r.Entries) != "committed:2" {
		t.Fatalf("last record: totals %+v entries %q, want 10 rows before committed:2", r.Totals, events(r.Entries))
	}
	// A third incarnation after a crash with nothing new: same totals.
	s2.Close()
	s3 := mustOpenStore(t, cfg)
	if s3.totals == nil || s3.totals.Tables["db.t"].RowsLoaded != 14 || s3.totals.Through != 2 {
		t.Fatalf("totals at the third open: %+v, want 14 rows through 2", s3.totals)
	}
}

// The first save after an upgrade (no record with totals yet) starts the
// totals from what the store knows: checkpoint 1 for a scope that decided
// nothing, else the first checkpoint whose commit is still to be
// recorded, so verify can tell totals that start mid-history.
func TestEvidenceTotalsStartAfterAnUpgrade(t *testing.T) {
	s := &Store{}
	if got := s.startTotals(); got.Since != 1 {
		t.Errorf("fresh scope: since %d, want 1", got.Since)
	}
	s.last = &checkpoint.State{Decided: &checkpoint.Decision{ID: 5, Txns: []checkpoint.Txn{{Table: "db.t", Committed: true}, {Table: "db.u"}}}}
	if got := s.startTotals(); got.Since != 5 {
		t.Errorf("checkpoint 5 partly committed: since %d, want 5 (its commit is still to be counted)", got.Since)
	}
	s.last.Decided.Txns[1].Committed = true
	if got := s.startTotals(); got.Since != 6 {
		t.Errorf("checkpoint 5 committed: since %d, want 6", got.Since)
	}
	s.last.Decided = &checkpoint.Decision{ID: 7}
	if got := s.startTotals(); got.Since != 7 {
		t.Errorf("checkpoint 7 decided, single-table form, not committed: since %d, want 7", got.Since)
	}
	s.totals = &EvidenceTotals{Since: 1, Through: 5}
	if got := s.startTotals(); got.Since != 1 || got.Through != 5 {
		t.Errorf("learned totals: %+v, want them unchanged", got)
	}
}
