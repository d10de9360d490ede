package checkpoint

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/doris-sink/doris-sink/label"
)

// Label returns the label of checkpoint id for o: label.Build(o.Job, o.DB,
// o.Table, o.Writer, id).
func (o Owner) Label(id uint64) (string, error) {
	return label.Build(o.Job, o.DB, o.Table, o.Writer, id)
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

func (d Decision) clone() Decision {
	d.Start = bytes.Clone(d.Start)
	d.End = bytes.Clone(d.End)
	if d.Counts != nil {
		c := *d.Counts
		d.Counts = &c
	}
	return d
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
	a := Announcement{ID: id, Label: l, At: at}
	s.Announced = append(s.Announced, a)
	s.NextID = id + 1
	return a, nil
}

// Unannounce removes the announcement of checkpoint id (after its label was
// aborted or found final). It reports whether it was present.
func (s *State) Unannounce(id uint64) bool {
	i := slices.IndexFunc(s.Announced, func(a Announcement) bool { return a.ID == id })
	if i < 0 {
		return false
	}
	s.Announced = slices.Delete(s.Announced, i, i+1)
	return true
}

// Decide makes d the last decided checkpoint. A previous Decided with
// another id moves to History (the oldest entries beyond MaxHistory are
// dropped); one with the same id (healing, commit) is replaced. d's
// announcement is removed and NextID raised above d.ID. Decide does not
// validate; Save does.
func (s *State) Decide(d Decision) {
	if s.Decided != nil && s.Decided.ID != d.ID {
		s.History = append(s.History, s.Decided.clone())
		if n := len(s.History) - MaxHistory; n > 0 {
			s.History = slices.Delete(s.History, 0, n)
		}
	}
	d = d.clone()
	s.Decided = &d
	s.Unannounce(d.ID)
	if s.NextID <= d.ID {
		s.NextID = d.ID + 1
	}
}
