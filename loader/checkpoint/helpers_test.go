package checkpoint

import (
	"encoding/json"
	"testing"
	"time"
)

var testOwner = Owner{Job: "orders-eos", DB: "demo", Table: "orders", Source: "kafka:orders", Writer: "0"}

// at returns a fixed UTC time (UTC survives a JSON round trip unchanged).
func at(sec int) time.Time { return time.Date(2026, 1, 2, 3, 4, sec, 123456789, time.UTC) }

func lbl(t testing.TB, id uint64) string {
	t.Helper()
	l, err := testOwner.Label(id)
	if err != nil {
		t.Fatalf("label %d: %v", id, err)
	}
	return l
}

func decision(t testing.TB, id uint64) Decision {
	t.Helper()
	return Decision{
		ID: id, Label: lbl(t, id), TxnID: int64(1000 + id),
		Start:     json.RawMessage(`{"0":10,"1":20}`),
		End:       json.RawMessage(`{"0":15,"1":22}`),
		DecidedAt: at(int(id)),
	}
}

// customers is the second table of fullState's decided checkpoint.
const customers = "demo.customers"

func txnLabel(t testing.TB, table string, id uint64) string {
	t.Helper()
	l, err := testOwner.TxnLabel(table, id)
	if err != nil {
		t.Fatalf("label %s %d: %v", table, id, err)
	}
	return l
}

// legacyFullState returns a valid state of the version-1 form (decisions
// without Txns, announcements without tables) with every field set: what
// testdata/v1-before-counts.json held, plus counts.
func legacyFullState(t testing.TB) *State {
	t.Helper()
	d := decision(t, 5)
	d.Committed, d.CommittedAt, d.Healed = true, at(30), 2
	d.Counts = &LoadCounts{RowsTotal: 12, RowsLoaded: 9, RowsFiltered: 2, RowsUnselected: 1, Bytes: 340,
		Attempts: 2, DeadLettered: 3}
	h3 := decision(t, 3)
	h3.Empty, h3.TxnID = true, 0
	h3.Counts = &LoadCounts{DeadLettered: 4}
	h4 := decision(t, 4) // decided before counts were recorded: Counts nil
	return &State{
		Owner:   testOwner,
		Decided: &d,
		Announced: []Announcement{
			{ID: 2, Label: lbl(t, 2), At: at(2)}, // abandoned attempt, still to abort
			{ID: 6, Label: lbl(t, 6), At: at(6)},
			{ID: 7, Label: lbl(t, 7), At: at(7)},
		},
		NextID:   8,
		History:  []Decision{h3, h4},
		Resolved: []Resolution{{CheckpointID: 1, Label: lbl(t, 1), Assumed: ResolvedVisible, By: "ops@host", At: at(40)}},
	}
}

// fullState returns a valid state of the version-2 form with every field
// of every type set: decision 5 holds txns of two tables (the owner's and
// customers), checkpoint 7 is announced for both tables.
func fullState(t testing.TB) *State {
	t.Helper()
	s := legacyFullState(t)
	s.normalize()
	d := s.Decided
	d.Txns[0].Counts = &LoadCounts{RowsTotal: 7, RowsLoaded: 5, RowsFiltered: 1, RowsUnselected: 1, Bytes: 200, Attempts: 1}
	d.Txns = append(d.Txns, Txn{Table: customers, Label: txnLabel(t, customers, 5), TxnID: 2005, Committed: true,
		CommittedAt: at(29), Healed: 1,
		Counts: &LoadCounts{RowsTotal: 5, RowsLoaded: 4, RowsFiltered: 1, Bytes: 140, Attempts: 1}})
	d.Sync(s.Owner)
	s.Announced = append(s.Announced, Announcement{ID: 7, Table: customers, Label: txnLabel(t, customers, 7), At: at(8)})
	s.Resolved = append(s.Resolved, Resolution{CheckpointID: 2, Table: customers, Label: txnLabel(t, customers, 2),
		Assumed: ResolvedAborted, By: "ops@host", At: at(41)})
	return s
}

// noIncarnation returns a copy of s without the FileStore incarnation ids
// (State.Incarnation, Decision.Incarnation), which change at every open.
func noIncarnation(s *State) *State {
	if s == nil {
		return nil
	}
	c := s.Clone()
	c.Incarnation = ""
	if c.Decided != nil {
		c.Decided.Incarnation = ""
	}
	for i := range c.History {
		c.History[i].Incarnation = ""
	}
	return c
}
