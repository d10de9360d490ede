// Package jobstate reads what a job knows (its checkpoint state, from the
// data directory or the Kafka state topic per job.coordinator, and its
// evidence ledger) without taking locks or fencing anything, so it works
// while a sink runs, and answers "what does the job know about this label".
package jobstate

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// Roles of a label in the store.
const (
	RoleDecided   = "decided"   // the last decided checkpoint
	RoleHistory   = "history"   // an earlier decided checkpoint
	RoleAnnounced = "announced" // announced, not decided
)

// Label is one label the store knows.
type Label struct {
	Label string `json:"label"`
	// Scope is the writer scope (slot) whose state holds the label.
	Scope      string `json:"scope,omitempty"`
	Checkpoint uint64 `json:"checkpoint"`
	// Table is the txn's table ("db.table") of a decided label, or the
	// announced label's table; empty for an empty decision.
	Table     string    `json:"table,omitempty"`
	Role      string    `json:"role"`
	TxnID     int64     `json:"txn_id,omitempty"`
	Committed bool      `json:"committed"`
	At        time.Time `json:"at"`
	// Resolved is the operator's assumption (visible|aborted), if any.
	Resolved string `json:"resolved,omitempty"`
}

// View is the content of a data directory.
type View struct {
	Dir   string
	State *checkpoint.State
	// Ledger is nil when the directory has no ledger yet; in group mode
	// it holds every local slot ledger's entries (SlotDataDir), slot by
	// slot.
	Ledger []ledger.Entry
	// Torn describes a torn last ledger line, if any.
	Torn *ledger.TornTail
	// Kafka is set when the state was read from the job's Kafka state
	// topic (Open with job.coordinator kafka); Dir is then the data dir of
	// the ledger.
	Kafka *Kafka
	// Slots are every writer scope's state record read from Kafka, by
	// slot number (nil for a file store); State is slot 0's (or, when
	// slot 0 has no record yet, the first slot's). SlotCount is the
	// job's recorded slot count (1: standalone).
	Slots     []Slot
	SlotCount int
}

// Read reads the store and the ledger in dir. A missing store is an error
// wrapping fs.ErrNotExist; a missing ledger is not an error.
func Read(dir string) (*View, error) {
	st, err := checkpoint.ReadFile(dir)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint store in %s: %w", dir, err)
	}
	v := &View{Dir: dir, State: st}
	entries, torn, err := ledger.ReadFile(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read ledger in %s: %w", dir, err)
	default:
		v.Ledger, v.Torn = entries, torn
	}
	return v, nil
}

// Labels returns every label of the store, of every writer slot, newest
// checkpoint first.
func (v *View) Labels() []Label {
	var out []Label
	for _, s := range v.slotList() {
		out = append(out, stateLabels(s.State, s.Scope)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Checkpoint > out[j].Checkpoint })
	return out
}

// stateLabels returns every label of st, tagged with scope.
func stateLabels(st *checkpoint.State, scope string) []Label {
	resolved := map[uint64]string{}
	for _, r := range st.Resolved {
		resolved[r.CheckpointID] = r.Assumed
	}
	var out []Label
	add := func(d checkpoint.Decision, role string) {
		if len(d.Txns) == 0 {
			out = append(out, Label{Label: d.Label, Scope: scope, Checkpoint: d.ID, Role: role, TxnID: d.TxnID,
				Committed: d.Committed, At: d.DecidedAt, Resolved: resolved[d.ID]})
			return
		}
		for _, t := range d.Txns { // one label per table the checkpoint touched
			out = append(out, Label{Label: t.Label, Scope: scope, Checkpoint: d.ID, Table: t.Table, Role: role, TxnID: t.TxnID,
				Committed: t.Committed, At: d.DecidedAt, Resolved: resolved[d.ID]})
		}
	}
	if st.Decided != nil {
		add(*st.Decided, RoleDecided)
	}
	for _, d := range st.History {
		add(d, RoleHistory)
	}
	for _, a := range st.Announced {
		out = append(out, Label{Label: a.Label, Scope: scope, Checkpoint: a.ID, Table: a.Table, Role: RoleAnnounced, At: a.At})
	}
	return out
}

// Find returns what the store and the ledger know about label l.
func (v *View) Find(l string) ([]Label, []ledger.Entry) {
	var labels []Label
	for _, x := range v.Labels() {
		if x.Label == l {
			labels = append(labels, x)
		}
	}
	var entries []ledger.Entry
	for _, e := range v.Ledger {
		if e.Label == l {
			entries = append(entries, e)
		}
	}
	return labels, entries
}

// WithPrefix filters labels by prefix.
func WithPrefix(ls []Label, prefix string) []Label {
	var out []Label
	for _, l := range ls {
		if strings.HasPrefix(l.Label, prefix) {
			out = append(out, l)
		}
	}
	return out
}
