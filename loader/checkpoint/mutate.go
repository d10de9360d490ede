package checkpoint

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/label"
)

// Label returns the label of checkpoint id for o: label.Build(o.Job, o.DB,
// o.Table, o.Writer, id).
func (o Owner) Label(id uint64) (string, error) {
	return label.Build(o.Job, o.DB, o.Table, o.Writer, id)
}

// TableName returns the owner's table as "db.table", the form of
// Txn.Table and Announcement.Table.
func (o Owner) TableName() string { return o.DB + "." + o.Table }

// TxnLabel returns the label of checkpoint id's txn into table ("db.table")
// for o: label.Build(o.Job, db, table, o.Writer, id). TxnLabel(o.TableName(),
// id) is Label(id).
func (o Owner) TxnLabel(table string, id uint64) (string, error) {
	db, tbl, err := SplitTable(table)
	if err != nil {
		return "", err
	}
	return label.Build(o.Job, db, tbl, o.Writer, id)
}

// SubLabel returns the label of sub-load sub of checkpoint id's txn into
// table ("db.table") for o: label.BuildSub(o.Job, db, table, o.Writer, id,
// sub). SubLabel(table, 0, id) is TxnLabel(table, id).
func (o Owner) SubLabel(table string, sub int, id uint64) (string, error) {
	db, tbl, err := SplitTable(table)
	if err != nil {
		return "", err
	}
	return label.BuildSub(o.Job, db, tbl, o.Writer, id, sub)
}

// SplitTable splits "db.table" at its first dot. Both parts must be
// non-empty.
func SplitTable(table string) (db, tbl string, err error) {
	db, tbl, ok := strings.Cut(table, ".")
	if !ok || db == "" || tbl == "" {
		return "", "", fmt.Errorf("table %q: want db.table", table)
	}
	return db, tbl, nil
}

// String describes o for error messages: job "j" table db.t source "s"
// writer "0".
func (o Owner) String() string {
	return fmt.Sprintf("job %q table %s.%s source %q writer %q", o.Job, o.DB, o.Table, o.Source, o.Writer)
}

// Clone returns a deep copy of s (nil for nil).
func (s *State) Clone() *State {
	if s == nil {
		return nil
	}
	c := *s
	if s.Decided != nil {
		d := s.Decided.clone()
		c.Decided = &d
	}
	c.Announced = slices.Clone(s.Announced)
	if s.History != nil {
		c.History = make([]Decision, len(s.History))
		for i, d := range s.History {
			c.History[i] = d.clone()
		}
	}
	c.Resolved = slices.Clone(s.Resolved)
	return &c
}

// Clone returns a deep copy of d.
func (d *Decision) Clone() Decision { return d.clone() }

func (d Decision) clone() Decision {
	d.Start = bytes.Clone(d.Start)
	d.End = bytes.Clone(d.End)
	d.Counts = d.Counts.clone()
	if d.Txns != nil {
		d.Txns = slices.Clone(d.Txns)
		for i := range d.Txns {
			d.Txns[i].Counts = d.Txns[i].Counts.clone()
		}
	}
	return d
}

func (c *LoadCounts) clone() *LoadCounts {
	if c == nil {
		return nil
	}
	v := *c
	return &v
}

// Txn returns the txn of table (sub-load 0) in d, nil if d has none.
func (d *Decision) Txn(table string) *Txn { return d.SubTxn(table, 0) }

// SubTxn returns the txn of sub-load sub of table in d, nil if d has none.
func (d *Decision) SubTxn(table string, sub int) *Txn {
	for i := range d.Txns {
		if d.Txns[i].Table == table && d.Txns[i].Sub == sub {
			return &d.Txns[i]
		}
	}
	return nil
}

// HasTable reports whether d has a txn of table (any sub-load).
func (d *Decision) HasTable(table string) bool {
	return slices.ContainsFunc(d.Txns, func(t Txn) bool { return t.Table == table })
}

// SubLoads returns the number of sub-loads table's rows were routed over
// in d (Txn.Subs; 1 when d has no txn of table or the txn says 0).
func (d *Decision) SubLoads(table string) int {
	for _, t := range d.Txns {
		if t.Table == table {
			return max(t.Subs, 1)
		}
	}
	return 1
}

// Sync recomputes the single-table summary of d from d.Txns for owner o
// (see Decision.Txns): Txns are sorted by table and sub-load, Empty is
// len(Txns) == 0, TxnID is the owner table's txn id (0 when untouched),
// and Committed (with the latest CommittedAt) is set when every txn is
// committed. An Empty decision keeps its Committed fields. A decision of
// one txn whose summary says Committed (set by a single-table writer)
// marks that txn committed first. A decision in
// the version-1 form (no Txns, not Empty) first becomes one Txn of the
// owner's table carrying its label, txn id, commit, heal and counts.
func (d *Decision) Sync(o Owner) {
	if len(d.Txns) == 0 {
		if d.Empty || d.TxnID == 0 {
			d.Txns = nil
			return
		}
		d.Txns = []Txn{{Table: o.TableName(), Label: d.Label, TxnID: d.TxnID, Committed: d.Committed,
			CommittedAt: d.CommittedAt, Healed: d.Healed, Counts: d.Counts.clone()}}
		if c := d.Txns[0].Counts; c != nil {
			c.DeadLettered = 0 // counted on the decision
		}
	}
	if len(d.Txns) == 1 && d.Committed && !d.Txns[0].Committed {
		// A single-table writer (an older caller of this package) marked
		// the decision committed: that marks its one txn.
		d.Txns[0].Committed, d.Txns[0].CommittedAt = true, d.CommittedAt
	}
	slices.SortStableFunc(d.Txns, func(a, b Txn) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return a.Sub - b.Sub
	})
	d.Empty = false
	d.TxnID = 0
	if t := d.Txn(o.TableName()); t != nil {
		d.TxnID = t.TxnID
	}
	all := true
	var last time.Time
	for _, t := range d.Txns {
		all = all && t.Committed
		if t.CommittedAt.After(last) {
			last = t.CommittedAt
		}
	}
	d.Committed, d.CommittedAt = all, time.Time{}
	if all {
		d.CommittedAt = last
	}
}

// MarkCommitted marks the txn of table (sub-load 0) committed at at,
// unless it already is, and syncs d's summary. It reports whether d has
// that txn.
func (d *Decision) MarkCommitted(o Owner, table string, at time.Time) bool {
	return d.MarkSubCommitted(o, table, 0, at)
}

// MarkSubCommitted marks the txn of sub-load sub of table committed at at,
// unless it already is, and syncs d's summary. It reports whether d has
// that txn.
func (d *Decision) MarkSubCommitted(o Owner, table string, sub int, at time.Time) bool {
	t := d.SubTxn(table, sub)
	if t == nil {
		return false
	}
	if !t.Committed {
		t.Committed, t.CommittedAt = true, at
	}
	d.Sync(o)
	return true
}

// normalize brings s to the format-2 form: every non-empty decision has
// its Txns (Decision.Sync) and every announcement and resolution its
// table.
func (s *State) normalize() {
	if s.Decided != nil {
		s.Decided.Sync(s.Owner)
	}
	for i := range s.History {
		s.History[i].Sync(s.Owner)
	}
	for i := range s.Announced {
		if s.Announced[i].Table == "" {
			s.Announced[i].Table = s.Owner.TableName()
		}
	}
	for i := range s.Resolved {
		if s.Resolved[i].Table == "" {
			s.Resolved[i].Table = s.Owner.TableName()
		}
	}
}

// Announce hands out checkpoint id NextID: it appends its Announcement (with
// Owner.Label(id) and at) to Announced and increments NextID. The caller
// then Saves the state before beginning the Stream Load (docs/design.md §2
// invariant 1).
func (s *State) Announce(at time.Time) (Announcement, error) {
	id := s.NextID
	if id == 0 {
		return Announcement{}, &InvariantError{Reason: "next_id is 0; checkpoint ids start at 1"}
	}
	l, err := s.Owner.Label(id)
	if err != nil {
		return Announcement{}, fmt.Errorf("announce checkpoint %d: %w", id, err)
	}
	a := Announcement{ID: id, Table: s.Owner.TableName(), Label: l, At: at}
	s.Announced = append(s.Announced, a)
	s.NextID = id + 1
	return a, nil
}

// AnnounceTable announces the label of checkpoint id's txn into table
// ("db.table"): a table first written in the middle of checkpoint id. The
// id must be handed out already (below NextID) and not decided. Announcing
// a (checkpoint, table) twice returns the existing announcement. The
// caller Saves the state before beginning that table's Stream Load.
func (s *State) AnnounceTable(id uint64, table string, at time.Time) (Announcement, error) {
	return s.AnnounceSub(id, table, 0, at)
}

// AnnounceSub is AnnounceTable for sub-load sub of table: each sub-load is
// announced on its own (its label is Owner.SubLabel(table, sub, id)).
func (s *State) AnnounceSub(id uint64, table string, sub int, at time.Time) (Announcement, error) {
	if i := slices.IndexFunc(s.Announced, func(a Announcement) bool { return a.ID == id && a.Table == table && a.Sub == sub }); i >= 0 {
		return s.Announced[i], nil
	}
	if id == 0 || id >= s.NextID {
		return Announcement{}, &InvariantError{Checkpoint: id, Reason: fmt.Sprintf(
			"announce table %s: checkpoint id is not handed out (next_id %d)", table, s.NextID)}
	}
	if s.Decided != nil && s.Decided.ID == id {
		return Announcement{}, &InvariantError{Checkpoint: id, Reason: "announce table " + table + ": checkpoint is decided"}
	}
	l, err := s.Owner.SubLabel(table, sub, id)
	if err != nil {
		return Announcement{}, fmt.Errorf("announce checkpoint %d: %w", id, err)
	}
	a := Announcement{ID: id, Table: table, Sub: sub, Label: l, At: at}
	i, _ := slices.BinarySearchFunc(s.Announced, id+1, func(a Announcement, id uint64) int { return cmpID(a.ID, id) })
	s.Announced = slices.Insert(s.Announced, i, a)
	return a, nil
}

func cmpID(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Unannounce removes every announcement of checkpoint id (after its labels
// were aborted or found final). It reports whether one was present.
func (s *State) Unannounce(id uint64) bool {
	n := len(s.Announced)
	s.Announced = slices.DeleteFunc(s.Announced, func(a Announcement) bool { return a.ID == id })
	return len(s.Announced) < n
}

// UnannounceLabel removes the announcement of label lbl. It reports
// whether it was present.
func (s *State) UnannounceLabel(lbl string) bool {
	n := len(s.Announced)
	s.Announced = slices.DeleteFunc(s.Announced, func(a Announcement) bool { return a.Label == lbl })
	return len(s.Announced) < n
}

// Decide makes d the last decided checkpoint. A previous Decided with
// another id moves to History (the oldest entries beyond MaxHistory are
// dropped); one with the same id (healing, commit) is replaced. d's
// announcements (every table) are removed and NextID raised above d.ID.
// d's summary is synced (Decision.Sync). Decide does not validate; Save
// does.
func (s *State) Decide(d Decision) {
	if s.Decided != nil && s.Decided.ID != d.ID {
		s.History = append(s.History, s.Decided.clone())
		if n := len(s.History) - MaxHistory; n > 0 {
			s.History = slices.Delete(s.History, 0, n)
		}
	}
	d = d.clone()
	d.Sync(s.Owner)
	s.Decided = &d
	s.Unannounce(d.ID)
	if s.NextID <= d.ID {
		s.NextID = d.ID + 1
	}
}
