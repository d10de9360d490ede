package checkpoint

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFullStateIsValid(t *testing.T) {
	t.Parallel()
	if err := fullState(t).Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if err := NewState(testOwner).Validate(); err != nil {
		t.Fatalf("NewState: Validate: %v", err)
	}
}

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	other := testOwner
	other.Table = "payments"
	otherLabel, err := other.Label(5)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(s *State)
		id     uint64 // checkpoint the error must name
		want   string // text the reason must contain
	}{
		{"invalid job", func(s *State) { s.Owner.Job = "a:b" }, 0, "prefix"},
		{"empty table", func(s *State) { s.Owner.Table = "" }, 0, "must not be empty"},
		{"invalid writer", func(s *State) { s.Owner.Writer = "" }, 0, "scope"},
		{"next_id zero", func(s *State) { s.NextID = 0 }, 0, "next_id is 0"},
		{"decided not below next_id", func(s *State) { s.NextID = 5; s.Announced = nil }, 5, "next_id 5"},
		{"decided id zero", func(s *State) { s.Decided.ID = 0 }, 0, "id 0"},
		{"decided label of another table", func(s *State) { s.Decided.Label = otherLabel }, 5, otherLabel},
		{"empty with txn", func(s *State) { s.Decided.Empty = true }, 5, "empty but has 2 txns"},
		{"legacy empty with txn", func(s *State) { s.Decided.Txns = nil; s.Decided.Empty = true }, 5, "empty but has txn id 1005"},
		{"legacy txn missing", func(s *State) { s.Decided.Txns = nil; s.Decided.TxnID = 0 }, 5, "txn id 0"},
		{"summary txn id", func(s *State) { s.Decided.TxnID = 0 }, 5, "txn_id 0 is not the txn id 1005 of the owner table demo.orders"},
		{"txn without txn id", func(s *State) { s.Decided.Txns[0].TxnID = 0 }, 5, "txn of table demo.customers: txn id 0"},
		{"txn label of another checkpoint", func(s *State) { s.Decided.Txns[0].Label = txnLabel(t, customers, 4) }, 5,
			"is not this store's label"},
		{"txn label of another table", func(s *State) { s.Decided.Txns[0].Label = lbl(t, 5) }, 5, "is not this store's label"},
		{"txn table malformed", func(s *State) { s.Decided.Txns[0].Table = "customers" }, 5, "want db.table"},
		{"txn table twice", func(s *State) { s.Decided.Txns[1] = s.Decided.Txns[0] }, 5, "two txns in one decision"},
		{"txn sub-load beyond its count", func(s *State) { s.Decided.Txns[0].Sub = 1 }, 5, "sub-load 1 is not in [0, 1)"},
		{"txn committed_at without committed", func(s *State) { s.Decided.Txns[0].Committed = false }, 5, "not committed but has committed_at"},
		{"txn negative healed", func(s *State) { s.Decided.Txns[1].Healed = -1 }, 5, "negative healed"},
		{"txn negative rows", func(s *State) { s.Decided.Txns[1].Counts.Bytes = -1 }, 5, "negative load count"},
		{"summary committed", func(s *State) {
			s.Decided.Txns[0].Committed, s.Decided.Txns[0].CommittedAt = false, time.Time{}
		}, 5, "says committed true but its txns say false"},
		{"no decided_at", func(s *State) { s.Decided.DecidedAt = time.Time{} }, 5, "decided_at"},
		{"committed_at without committed", func(s *State) { s.Decided.Txns = nil; s.Decided.Committed = false }, 5, "not committed"},
		{"negative healed", func(s *State) { s.Decided.Healed = -1 }, 5, "negative healed"},
		{"negative rows", func(s *State) { s.Decided.Counts.RowsLoaded = -1 }, 5, "negative load count"},
		{"negative attempts", func(s *State) { s.Decided.Counts.Attempts = -2 }, 5, "negative load count"},
		{"negative dead-lettered in history", func(s *State) { s.History[0].Counts.DeadLettered = -1 }, 3, "negative load count"},
		{"bad start", func(s *State) { s.Decided.Start = json.RawMessage(`{`) }, 5, "start position"},
		{"bad end", func(s *State) { s.Decided.End = json.RawMessage(`x`) }, 5, "end position"},
		{"history without decided", func(s *State) { s.Decided = nil }, 3, "nothing is decided"},
		{"history out of order", func(s *State) { s.History[0], s.History[1] = s.History[1], s.History[0] }, 3, "must increase"},
		{"history at decided", func(s *State) { s.History[1] = decision(t, 5) }, 5, "below the decided"},
		{"history too long", func(s *State) {
			s.History = nil
			for i := range MaxHistory + 1 {
				s.History = append(s.History, decision(t, uint64(i+1)))
			}
			s.Decided = new(decision(t, MaxHistory+2))
			s.NextID, s.Announced, s.Resolved = MaxHistory+3, nil, nil
		}, 0, "at most 64"},
		{"announced and decided", func(s *State) { s.Announced[1] = Announcement{ID: 5, Label: lbl(t, 5), At: at(5)} }, 5, "decided at once"},
		{"announced and in history", func(s *State) { s.Announced[0] = Announcement{ID: 4, Label: lbl(t, 4), At: at(4)} }, 4, "decided at once"},
		{"announced out of order", func(s *State) { s.Announced[1], s.Announced[2] = s.Announced[2], s.Announced[1] }, 6, "must not decrease"},
		{"announced table twice", func(s *State) {
			s.Announced[3].Table, s.Announced[3].Label = s.Announced[2].Table, s.Announced[2].Label
		}, 7,
			"announced twice"},
		{"announced table label", func(s *State) { s.Announced[3].Label = lbl(t, 7) }, 7, "of table demo.customers"},
		{"resolution table label", func(s *State) { s.Resolved[1].Label = lbl(t, 2) }, 2, "of table demo.customers"},
		{"announced at next_id", func(s *State) { s.NextID = 7 }, 7, "not below next_id 7"},
		{"announced wrong label", func(s *State) { s.Announced[2].Label = lbl(t, 6) }, 7, "is not this store's label"},
		{"announced without time", func(s *State) { s.Announced[2].At = time.Time{} }, 7, "no time"},
		{"resolution bad assumption", func(s *State) { s.Resolved[0].Assumed = "maybe" }, 1, `"maybe"`},
		{"resolution anonymous", func(s *State) { s.Resolved[0].By = "" }, 1, "by whom"},
		{"resolution beyond next_id", func(s *State) { s.Resolved[0].CheckpointID = 9; s.Resolved[0].Label = lbl(t, 9) }, 9, "next_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := fullState(t)
			c.mutate(s)
			err := s.Validate()
			var ie *InvariantError
			if !errors.As(err, &ie) {
				t.Fatalf("Validate = %v, want *InvariantError", err)
			}
			if ie.Checkpoint != c.id {
				t.Errorf("error names checkpoint %d, want %d: %v", ie.Checkpoint, c.id, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	t.Parallel()
	s := fullState(t)
	c := s.Clone()
	if !reflect.DeepEqual(s, c) {
		t.Fatalf("Clone differs:\n%+v\n%+v", s, c)
	}
	c.Decided.Start[2] = 'X'
	c.History[0].End[2] = 'X'
	c.Decided.Counts.RowsLoaded = 99
	c.History[0].Counts.DeadLettered = 99
	c.Decided.Txns[1].Counts.RowsLoaded = 99
	c.Decided.Txns[0].Label = "x"
	c.Announced[0].Label = "x"
	c.Resolved[0].By = "x"
	if !reflect.DeepEqual(s, fullState(t)) {
		t.Fatal("mutating the clone changed the original")
	}
	if (*State)(nil).Clone() != nil {
		t.Fatal("nil Clone is not nil")
	}
}

func TestAnnounceDecide(t *testing.T) {
	t.Parallel()
	s := NewState(testOwner)
	a1, err := s.Announce(at(1))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := s.Announce(at(2))
	if err != nil {
		t.Fatal(err)
	}
	if a1.ID != 1 || a2.ID != 2 || s.NextID != 3 || a1.Label != lbl(t, 1) || a2.Label != "orders-eos:demo-orders:0:2" {
		t.Fatalf("announced %+v %+v next %d", a1, a2, s.NextID)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	s.Decide(decision(t, 1))
	if s.Decided.ID != 1 || len(s.Announced) != 1 || s.Announced[0].ID != 2 || len(s.History) != 0 {
		t.Fatalf("after deciding 1: %+v", s)
	}
	// Healing/committing the same checkpoint replaces it in place.
	d := decision(t, 1)
	d.TxnID, d.Healed = 77, 1
	s.Decide(d)
	if s.Decided.TxnID != 77 || len(s.History) != 0 {
		t.Fatalf("re-deciding 1: %+v", s)
	}
	s.Decide(decision(t, 2))
	if s.Decided.ID != 2 || len(s.Announced) != 0 || len(s.History) != 1 || s.History[0].TxnID != 77 {
		t.Fatalf("after deciding 2: %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for id := uint64(3); id <= MaxHistory+10; id++ {
		if _, err := s.Announce(at(0)); err != nil {
			t.Fatal(err)
		}
		s.Decide(decision(t, id))
	}
	if len(s.History) != MaxHistory || s.History[0].ID != 10 || s.History[MaxHistory-1].ID != MaxHistory+9 {
		t.Fatalf("history has %d entries from %d", len(s.History), s.History[0].ID)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Unannounce(1) {
		t.Fatal("Unannounce of an absent id reported true")
	}
}

func TestAnnounceRefusesBadOwner(t *testing.T) {
	t.Parallel()
	s := NewState(Owner{Job: "bad job", DB: "d", Table: "t", Writer: "0"})
	if _, err := s.Announce(at(0)); err == nil || s.NextID != 1 || len(s.Announced) != 0 {
		t.Fatalf("Announce with invalid job = %v, state %+v", err, s)
	}
}

// A table first written mid-checkpoint is announced for the checkpoint's
// id (its label deterministic from owner, table and id); Decide removes
// the announcements of every table of the decided id.
func TestAnnounceTable(t *testing.T) {
	t.Parallel()
	s := NewState(testOwner)
	a1, err := s.Announce(at(1))
	if err != nil {
		t.Fatal(err)
	}
	if a1.Table != "demo.orders" {
		t.Fatalf("Announce table %q, want the owner's", a1.Table)
	}
	if _, err := s.AnnounceTable(2, customers, at(2)); err == nil {
		t.Fatal("AnnounceTable of an id not handed out succeeded")
	}
	c1, err := s.AnnounceTable(1, customers, at(2))
	if err != nil {
		t.Fatal(err)
	}
	if c1.Label != "orders-eos:demo-customers:0:1" || c1.ID != 1 || c1.Table != customers {
		t.Fatalf("AnnounceTable = %+v", c1)
	}
	if again, err := s.AnnounceTable(1, customers, at(3)); err != nil || again != c1 || len(s.Announced) != 2 {
		t.Fatalf("announcing twice = %+v, %v; announced %+v", again, err, s.Announced)
	}
	if _, err := s.AnnounceTable(1, "customers", at(3)); err == nil {
		t.Fatal("AnnounceTable of a table without db succeeded")
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := Decision{ID: 1, Label: lbl(t, 1), DecidedAt: at(4), Txns: []Txn{
		{Table: customers, Label: c1.Label, TxnID: 9},
	}}
	s.Decide(d)
	if len(s.Announced) != 0 {
		t.Fatalf("Decide left announcements %+v", s.Announced)
	}
	if s.Decided.TxnID != 0 || s.Decided.Empty || s.Decided.Committed {
		t.Fatalf("summary of a decision not touching the owner table: %+v", s.Decided)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AnnounceTable(1, "demo.x", at(5)); err == nil {
		t.Fatal("AnnounceTable of a decided id succeeded")
	}
	// An announcement for an earlier id stays in id order.
	if _, err := s.Announce(at(5)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Announce(at(6)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AnnounceTable(2, customers, at(7)); err != nil {
		t.Fatal(err)
	}
	if ids := []uint64{s.Announced[0].ID, s.Announced[1].ID, s.Announced[2].ID}; ids[1] != 2 || ids[2] != 3 {
		t.Fatalf("announced ids %v, want [2 2 3]", ids)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if !s.UnannounceLabel(txnLabel(t, customers, 2)) || len(s.Announced) != 2 || s.UnannounceLabel("x") {
		t.Fatalf("UnannounceLabel: %+v", s.Announced)
	}
}

// Sync derives the summary from the txns, and MarkCommitted commits one
// txn: the decision is committed only once every txn is.
func TestSyncAndMarkCommitted(t *testing.T) {
	t.Parallel()
	s := fullState(t)
	d := s.Decided
	for i := range d.Txns {
		d.Txns[i].Committed, d.Txns[i].CommittedAt = false, time.Time{}
	}
	d.Sync(s.Owner)
	if d.Committed || !d.CommittedAt.IsZero() || d.TxnID != 1005 || d.Txns[0].Table != customers {
		t.Fatalf("synced %+v", d)
	}
	if !d.MarkCommitted(s.Owner, "demo.orders", at(50)) || d.Committed {
		t.Fatalf("after one of two commits: %+v", d)
	}
	if d.MarkCommitted(s.Owner, "demo.nope", at(51)) {
		t.Fatal("MarkCommitted of a table without txn reported true")
	}
	if !d.MarkCommitted(s.Owner, customers, at(49)) || !d.Committed || !d.CommittedAt.Equal(at(50)) {
		t.Fatalf("after both commits: %+v", d)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// The version-1 form becomes one txn of the owner's table.
	l := decision(t, 9)
	l.Counts = &LoadCounts{RowsLoaded: 3, DeadLettered: 2}
	l.Sync(s.Owner)
	if len(l.Txns) != 1 || l.Txns[0].TxnID != 1009 || l.Txns[0].Label != l.Label || l.Txns[0].Counts.DeadLettered != 0 ||
		l.Txns[0].Counts.RowsLoaded != 3 || l.Counts.DeadLettered != 2 {
		t.Fatalf("legacy decision synced to %+v", l.Txns)
	}
}

// A single-table writer that marks the summary committed (as callers did
// before Txns existed) marks the decision's one txn.
func TestSummaryCommitMarksTheOneTxn(t *testing.T) {
	t.Parallel()
	s := NewState(testOwner)
	if _, err := s.Announce(at(1)); err != nil {
		t.Fatal(err)
	}
	s.Decide(decision(t, 1))
	s.Decided.Committed, s.Decided.CommittedAt = true, at(9)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if tx := got.Decided.Txns[0]; !tx.Committed || !tx.CommittedAt.Equal(at(9)) {
		t.Fatalf("txn after a summary commit: %+v", tx)
	}
	// With two txns the summary alone cannot commit them.
	f := fullState(t)
	f.Decided.Txns[0].Committed, f.Decided.Txns[0].CommittedAt = false, time.Time{}
	if err := f.Validate(); err == nil {
		t.Fatal("summary committed over an uncommitted txn of two accepted")
	}
}
