package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func subLabel(t testing.TB, table string, sub int, id uint64) string {
	t.Helper()
	l, err := testOwner.SubLabel(table, sub, id)
	if err != nil {
		t.Fatalf("label %s sub %d checkpoint %d: %v", table, sub, id, err)
	}
	return l
}

// subState is fullState with customers loaded through 4 sub-loads in
// decision 5 (subs 0, 1 and 3 touched) and sub-load 2 announced for 7.
func subState(t testing.TB) *State {
	t.Helper()
	s := fullState(t)
	d := s.Decided
	var txns []Txn
	for _, tx := range d.Txns {
		if tx.Table != customers {
			txns = append(txns, tx)
		}
	}
	for i, sub := range []int{0, 1, 3} {
		txns = append(txns, Txn{Table: customers, Sub: sub, Subs: 4, Label: subLabel(t, customers, sub, 5),
			TxnID: int64(3000 + i), Committed: true, CommittedAt: at(29),
			Counts: &LoadCounts{RowsTotal: 2, RowsLoaded: 2, Bytes: 40, Attempts: 1}})
	}
	d.Txns = txns
	d.Sync(s.Owner)
	s.Announced = append(s.Announced, Announcement{ID: 7, Table: customers, Sub: 2, Label: subLabel(t, customers, 2, 7), At: at(9)})
	return s
}

func TestSubLoadStateIsValid(t *testing.T) {
	t.Parallel()
	s := subState(t)
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got := s.Decided.SubLoads(customers); got != 4 {
		t.Fatalf("SubLoads(customers) = %d, want 4", got)
	}
	if got := s.Decided.SubLoads(s.Owner.TableName()); got != 1 {
		t.Fatalf("SubLoads(owner) = %d, want 1", got)
	}
	if tx := s.Decided.SubTxn(customers, 3); tx == nil || tx.TxnID != 3002 {
		t.Fatalf("SubTxn(customers, 3) = %+v", tx)
	}
	// The store round-trips sub and subs.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil || back.Decided.SubTxn(customers, 3).Subs != 4 || back.Announced[len(back.Announced)-1].Sub != 2 {
		t.Fatalf("round trip: %v %+v", err, back.Decided.Txns)
	}
}

func TestValidateRefusesSubLoads(t *testing.T) {
	t.Parallel()
	cust := func(s *State, sub int) *Txn { return s.Decided.SubTxn(customers, sub) }
	for _, c := range []struct {
		name   string
		mutate func(*State)
		want   string
	}{
		{"sub at K", func(s *State) { tx := cust(s, 3); tx.Sub, tx.Label = 4, subLabel(t, customers, 4, 5) }, "sub-load 4 is not in [0, 4)"},
		{"negative sub", func(s *State) { cust(s, 3).Sub = -1 }, "sub-load -1 is not in [0, 4)"},
		{"duplicate sub", func(s *State) { *cust(s, 3) = *cust(s, 1) }, "sub-load 1 has two txns in one decision"},
		{"K disagrees", func(s *State) { cust(s, 3).Subs = 5 }, "says 5 sub-loads, another txn of the table says 4"},
		{"K too large", func(s *State) { cust(s, 3).Subs = 300 }, "sub-load count 300"},
		{"label of another sub", func(s *State) { cust(s, 3).Label = subLabel(t, customers, 1, 5) }, "is not this store's label"},
		{"announced label of another sub", func(s *State) { s.Announced[len(s.Announced)-1].Sub = 1 }, "sub-load 1"},
		{"announced sub twice", func(s *State) {
			s.Announced = append(s.Announced, s.Announced[len(s.Announced)-1])
		}, "announced twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := subState(t)
			c.mutate(s)
			err := s.Validate()
			var ie *InvariantError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an *InvariantError containing %q", err, c.want)
			}
		})
	}
}

func TestAnnounceSubAndMarkSubCommitted(t *testing.T) {
	t.Parallel()
	s := NewState(testOwner)
	a, err := s.Announce(at(1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AnnounceSub(a.ID, customers, 2, at(2))
	if err != nil || b.Label != subLabel(t, customers, 2, a.ID) || !strings.HasSuffix(b.Label, ":2") {
		t.Fatalf("AnnounceSub = %+v, %v", b, err)
	}
	again, err := s.AnnounceSub(a.ID, customers, 2, at(3))
	if err != nil || again != b || len(s.Announced) != 2 {
		t.Fatalf("AnnounceSub twice = %+v, %v (%d announced)", again, err, len(s.Announced))
	}
	if zero, err := s.AnnounceSub(a.ID, customers, 0, at(4)); err != nil || zero.Label != txnLabel(t, customers, a.ID) {
		t.Fatalf("AnnounceSub sub 0 = %+v, %v; want TxnLabel", zero, err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := Decision{ID: a.ID, Label: a.Label, DecidedAt: at(5), Txns: []Txn{
		{Table: customers, Sub: 0, Subs: 3, Label: subLabel(t, customers, 0, a.ID), TxnID: 7},
		{Table: customers, Sub: 2, Subs: 3, Label: subLabel(t, customers, 2, a.ID), TxnID: 8},
	}}
	s.Decide(d)
	if len(s.Announced) != 0 {
		t.Fatalf("Decide left %+v announced", s.Announced)
	}
	if !s.Decided.MarkSubCommitted(testOwner, customers, 2, at(6)) || s.Decided.Committed {
		t.Fatalf("after committing sub 2 only: %+v", s.Decided)
	}
	if s.Decided.MarkSubCommitted(testOwner, customers, 1, at(6)) {
		t.Fatal("MarkSubCommitted of an untouched sub-load reported a txn")
	}
	s.Decided.MarkSubCommitted(testOwner, customers, 0, at(7))
	if !s.Decided.Committed || !s.Decided.CommittedAt.Equal(at(7)) {
		t.Fatalf("every sub-load committed: %+v", s.Decided)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

// The sub-load golden file (testdata/v2-sub-loads.json, subState) decodes
// to subState and re-encodes byte for byte; the K = 1 golden
// (v2-two-tables.json) stays as it was (TestDecodeReadsVersion2Golden).
func TestDecodeReadsSubLoadsGolden(t *testing.T) {
	t.Parallel()
	golden := filepath.Join("testdata", "v2-sub-loads.json")
	b, err := Encode(subState(t))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CHECKPOINT_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(old)
	if err != nil || !reflect.DeepEqual(got, subState(t)) {
		t.Fatalf("Decode(golden) = %+v, %v", got, err)
	}
	if !bytes.Equal(b, old) {
		t.Errorf("encoding subState differs from %s:\n%s", golden, b)
	}
}
