package checkpoint

import (
	"encoding/json"
	"fmt"

	"github.com/doris-sink/doris-sink/label"
)

// Validate checks o: Job is a valid label prefix, Writer a valid label
// scope, DB and Table are not empty.
func (o Owner) Validate() error {
	if err := label.ValidatePrefix(o.Job); err != nil {
		return fmt.Errorf("checkpoint owner job: %w", err)
	}
	if o.DB == "" || o.Table == "" {
		return fmt.Errorf("checkpoint owner of job %q: database and table must not be empty (got %q.%q)", o.Job, o.DB, o.Table)
	}
	if err := label.ValidateScope(o.Writer); err != nil {
		return fmt.Errorf("checkpoint owner writer: %w", err)
	}
	return nil
}

// Validate checks the invariants listed in the package documentation. The
// error is an *InvariantError naming the checkpoint id.
func (s *State) Validate() error {
	if s == nil {
		return &InvariantError{Reason: "state is nil"}
	}
	if err := s.Owner.Validate(); err != nil {
		return &InvariantError{Reason: err.Error()}
	}
	if s.NextID == 0 {
		return &InvariantError{Reason: "next_id is 0; checkpoint ids start at 1"}
	}
	if !validIncarnation(s.Incarnation) {
		return &InvariantError{Reason: fmt.Sprintf("incarnation %q: want at most %d lower-case hex digits", s.Incarnation, maxIncarnationLen)}
	}
	if s.Decided != nil {
		if err := s.validateDecision("decided", s.Decided); err != nil {
			return err
		}
	} else if len(s.History) > 0 {
		return &InvariantError{Checkpoint: s.History[0].ID, Reason: "history holds decisions but nothing is decided"}
	}
	if len(s.History) > MaxHistory {
		return &InvariantError{Reason: fmt.Sprintf("history holds %d decisions, at most %d allowed", len(s.History), MaxHistory)}
	}
	decided := make(map[uint64]bool, len(s.History)+1)
	var prev uint64
	for i := range s.History {
		d := &s.History[i]
		if err := s.validateDecision("history", d); err != nil {
			return err
		}
		if d.ID <= prev {
			return &InvariantError{Checkpoint: d.ID, Reason: fmt.Sprintf("history ids must increase, got %d after %d", d.ID, prev)}
		}
		if d.ID >= s.Decided.ID {
			return &InvariantError{Checkpoint: d.ID, Reason: fmt.Sprintf("history id must be below the decided checkpoint %d", s.Decided.ID)}
		}
		prev = d.ID
		decided[d.ID] = true
	}
	if s.Decided != nil {
		decided[s.Decided.ID] = true
	}
	prev = 0
	seen := make(map[string]bool, len(s.Announced))
	for _, a := range s.Announced {
		table := a.Table
		if table == "" {
			table = s.Owner.TableName()
		}
		if err := s.validateSubLabel("announced", a.ID, table, a.Sub, a.Label); err != nil {
			return err
		}
		if a.ID < prev {
			return &InvariantError{Checkpoint: a.ID, Reason: fmt.Sprintf("announced ids must not decrease, got %d after %d", a.ID, prev)}
		}
		if seen[a.Label] {
			return &InvariantError{Checkpoint: a.ID, Reason: fmt.Sprintf("table %s is announced twice", table)}
		}
		seen[a.Label] = true
		if decided[a.ID] {
			return &InvariantError{Checkpoint: a.ID, Reason: "announced (undecided) and decided at once"}
		}
		if a.At.IsZero() {
			return &InvariantError{Checkpoint: a.ID, Reason: "announcement has no time"}
		}
		prev = a.ID
	}
	for _, r := range s.Resolved {
		table := r.Table
		if table == "" {
			table = s.Owner.TableName()
		}
		if err := s.validateSubLabel("resolved", r.CheckpointID, table, r.Sub, r.Label); err != nil {
			return err
		}
		if r.Assumed != ResolvedVisible && r.Assumed != ResolvedAborted {
			return &InvariantError{Checkpoint: r.CheckpointID, Reason: fmt.Sprintf(
				"resolution assumes %q, want %q or %q", r.Assumed, ResolvedVisible, ResolvedAborted)}
		}
		if r.By == "" || r.At.IsZero() {
			return &InvariantError{Checkpoint: r.CheckpointID, Reason: "resolution must say by whom and when"}
		}
	}
	return nil
}

// validateID checks an id is in [1, NextID) and its label is Owner.Label(id).
func (s *State) validateID(what string, id uint64, lbl string) error {
	if err := s.validateIDRange(what, id); err != nil {
		return err
	}
	want, err := s.Owner.Label(id)
	if err != nil {
		return &InvariantError{Checkpoint: id, Reason: err.Error()}
	}
	if lbl != want {
		return &InvariantError{Checkpoint: id, Reason: fmt.Sprintf("%s label %q is not this store's label %q", what, lbl, want)}
	}
	return nil
}

// validateIDRange checks an id is in [1, NextID).
func (s *State) validateIDRange(what string, id uint64) error {
	if id == 0 {
		return &InvariantError{Reason: what + " checkpoint has id 0; ids start at 1"}
	}
	if id >= s.NextID {
		return &InvariantError{Checkpoint: id, Reason: fmt.Sprintf("%s id is not below next_id %d", what, s.NextID)}
	}
	return nil
}

// validateTxnLabel checks an id is in [1, NextID) and lbl is the label of
// its txn into table.
func (s *State) validateTxnLabel(what string, id uint64, table, lbl string) error {
	if table == s.Owner.TableName() {
		return s.validateID(what, id, lbl)
	}
	if err := s.validateIDRange(what, id); err != nil {
		return err
	}
	want, err := s.Owner.TxnLabel(table, id)
	if err != nil {
		return &InvariantError{Checkpoint: id, Reason: what + " " + err.Error()}
	}
	if lbl != want {
		return &InvariantError{Checkpoint: id, Reason: fmt.Sprintf("%s label %q is not this store's label %q of table %s",
			what, lbl, want, table)}
	}
	return nil
}

// validateSubLabel checks an id is in [1, NextID) and lbl is the label of
// sub-load sub of its txn into table.
func (s *State) validateSubLabel(what string, id uint64, table string, sub int, lbl string) error {
	if sub == 0 {
		return s.validateTxnLabel(what, id, table, lbl)
	}
	if err := s.validateIDRange(what, id); err != nil {
		return err
	}
	want, err := s.Owner.SubLabel(table, sub, id)
	if err != nil {
		return &InvariantError{Checkpoint: id, Reason: what + " " + err.Error()}
	}
	if lbl != want {
		return &InvariantError{Checkpoint: id, Reason: fmt.Sprintf("%s label %q is not this store's label %q of table %s sub-load %d",
			what, lbl, want, table, sub)}
	}
	return nil
}

func (s *State) validateDecision(what string, d *Decision) error {
	if err := s.validateID(what, d.ID, d.Label); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return &InvariantError{Checkpoint: d.ID, Reason: what + " " + fmt.Sprintf(format, args...)}
	}
	if !validIncarnation(d.Incarnation) {
		return bad("incarnation %q: want at most %d lower-case hex digits", d.Incarnation, maxIncarnationLen)
	}
	if len(d.Txns) > 0 {
		if err := s.validateTxns(what, d); err != nil {
			return err
		}
	}
	legacy := len(d.Txns) == 0
	switch {
	case !legacy && d.Empty:
		return bad("checkpoint is empty but has %d txns", len(d.Txns))
	case legacy && d.Empty && d.TxnID != 0:
		return bad("checkpoint is empty but has txn id %d", d.TxnID)
	case legacy && !d.Empty && d.TxnID <= 0:
		return bad("checkpoint has txn id %d; a non-empty checkpoint needs its precommitted txn id", d.TxnID)
	case d.DecidedAt.IsZero():
		return bad("checkpoint has no decided_at time")
	case !d.Committed && !d.CommittedAt.IsZero():
		return bad("checkpoint is not committed but has committed_at %s", d.CommittedAt)
	case d.Healed < 0:
		return bad("checkpoint has negative healed count %d", d.Healed)
	case d.Counts != nil && d.Counts.negative():
		return bad("checkpoint has a negative load count: %+v", *d.Counts)
	case len(d.Start) > 0 && !json.Valid(d.Start):
		return bad("checkpoint start position is not valid JSON")
	case len(d.End) > 0 && !json.Valid(d.End):
		return bad("checkpoint end position is not valid JSON")
	}
	return nil
}

// validateTxns checks the txns of d: tables well formed and distinct,
// labels deterministic from owner, table and id, txn ids set, and d's
// summary (Decision.Sync) consistent with them.
func (s *State) validateTxns(what string, d *Decision) error {
	bad := func(t *Txn, format string, args ...any) error {
		return &InvariantError{Checkpoint: d.ID, Reason: what + " txn of table " + t.Table + ": " + fmt.Sprintf(format, args...)}
	}
	type key struct {
		table string
		sub   int
	}
	seen := make(map[key]bool, len(d.Txns))
	subs := make(map[string]int, len(d.Txns))
	all := true
	var ownerTxn int64
	for i := range d.Txns {
		t := &d.Txns[i]
		if _, _, err := SplitTable(t.Table); err != nil {
			return bad(t, "%v", err)
		}
		k := max(t.Subs, 1)
		switch n, ok := subs[t.Table]; {
		case t.Subs < 0 || t.Subs > label.MaxSubLoads:
			return bad(t, "sub-load count %d; want 1 to %d", t.Subs, label.MaxSubLoads)
		case t.Sub < 0 || t.Sub >= k:
			return bad(t, "sub-load %d is not in [0, %d): the table was routed over %d sub-loads", t.Sub, k, k)
		case ok && n != k:
			return bad(t, "sub-load %d says %d sub-loads, another txn of the table says %d", t.Sub, k, n)
		case seen[key{t.Table, t.Sub}]:
			return bad(t, "sub-load %d has two txns in one decision", t.Sub)
		}
		subs[t.Table] = k
		seen[key{t.Table, t.Sub}] = true
		want, err := s.Owner.SubLabel(t.Table, t.Sub, d.ID)
		if err != nil {
			return bad(t, "%v", err)
		}
		switch {
		case t.Label != want:
			return bad(t, "label %q is not this store's label %q", t.Label, want)
		case t.TxnID <= 0:
			return bad(t, "txn id %d; a decided txn needs its precommitted txn id", t.TxnID)
		case !t.Committed && !t.CommittedAt.IsZero():
			return bad(t, "not committed but has committed_at %s", t.CommittedAt)
		case t.Healed < 0:
			return bad(t, "negative healed count %d", t.Healed)
		case t.Counts != nil && t.Counts.negative():
			return bad(t, "a negative load count: %+v", *t.Counts)
		}
		all = all && t.Committed
		if t.Table == s.Owner.TableName() && t.Sub == 0 {
			ownerTxn = t.TxnID
		}
	}
	switch {
	case d.TxnID != ownerTxn:
		return &InvariantError{Checkpoint: d.ID, Reason: fmt.Sprintf(
			"%s checkpoint txn_id %d is not the txn id %d of the owner table %s", what, d.TxnID, ownerTxn, s.Owner.TableName())}
	case d.Committed != all && !(d.Committed && len(d.Txns) == 1):
		// (A single-table writer marking the decision committed marks its
		// one txn: Decision.Sync copies the mark.)
		return &InvariantError{Checkpoint: d.ID, Reason: fmt.Sprintf(
			"%s checkpoint says committed %t but its txns say %t", what, d.Committed, all)}
	}
	return nil
}

// negative reports whether any count of c is negative.
func (c *LoadCounts) negative() bool {
	return c.RowsTotal < 0 || c.RowsLoaded < 0 || c.RowsFiltered < 0 || c.RowsUnselected < 0 ||
		c.Bytes < 0 || c.Attempts < 0 || c.DeadLettered < 0
}

// checkTransition refuses to move a store backwards from old to s.
func checkTransition(old, s *State) error {
	if old == nil {
		return nil
	}
	if s.NextID < old.NextID {
		return &InvariantError{Reason: fmt.Sprintf("next_id would go back from %d to %d", old.NextID, s.NextID)}
	}
	if old.Decided != nil {
		if s.Decided == nil {
			return &InvariantError{Checkpoint: old.Decided.ID, Reason: "decided checkpoint would be dropped"}
		}
		if s.Decided.ID < old.Decided.ID {
			return &InvariantError{Checkpoint: s.Decided.ID, Reason: fmt.Sprintf(
				"decided checkpoint would go back from %d", old.Decided.ID)}
		}
		if s.Decided.ID == old.Decided.ID {
			return checkCommittedKept(old.Decided, s.Decided)
		}
	}
	return nil
}

// checkCommittedKept refuses, for one decided id, a txn committed in old
// that is uncommitted, missing or of another txn id in s (a heal
// re-deciding the checkpoint keeps its committed txns as they are: only an
// aborted txn is replaced), or a committed decision becoming uncommitted.
func checkCommittedKept(old, s *Decision) error {
	if old.Committed && !s.Committed {
		return &InvariantError{Checkpoint: s.ID, Reason: "committed decision would become uncommitted"}
	}
	if len(s.Txns) == 0 {
		return nil // a decision in the legacy form: its summary is checked above
	}
	for _, t := range old.Txns {
		if !t.Committed {
			continue
		}
		var n *Txn
		for i := range s.Txns {
			if s.Txns[i].Table == t.Table && s.Txns[i].Sub == t.Sub {
				n = &s.Txns[i]
			}
		}
		if n == nil || !n.Committed || n.TxnID != t.TxnID {
			return &InvariantError{Checkpoint: s.ID, Reason: fmt.Sprintf(
				"committed txn %d of table %s (label %s) would be dropped, replaced or marked uncommitted",
				t.TxnID, t.Table, t.Label)}
		}
	}
	return nil
}
