package loader_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/ledger"
)

// ledgerEvents counts the ledger's entries by event.
func ledgerEvents(t *testing.T, dir string) map[string]int {
	t.Helper()
	entries, _, err := ledger.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ev := map[string]int{}
	for _, e := range entries {
		ev[e.Event]++
	}
	return ev
}

// entriesOf returns the ledger's entries of checkpoint id with event.
func entriesOf(t *testing.T, dir string, id uint64, event string) []ledger.Entry {
	t.Helper()
	entries, _, err := ledger.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Entry
	for _, e := range entries {
		if e.Checkpoint == id && e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

// ledgerEntry returns the last ledger entry of checkpoint id with event,
// nil if none.
func ledgerEntry(t *testing.T, dir string, id uint64, event string) *ledger.Entry {
	t.Helper()
	if es := entriesOf(t, dir, id, event); len(es) > 0 {
		return &es[len(es)-1]
	}
	return nil
}

// checkCounts checks the row counters and dead-lettered count of a ledger
// entry of a checkpoint holding rows rows, all loaded.
func checkCounts(t *testing.T, what string, en *ledger.Entry, rows, deadLettered int64) {
	t.Helper()
	switch {
	case en == nil:
		t.Fatalf("%s: no ledger entry", what)
	case en.RowsTotal != rows || en.RowsLoaded != rows || en.Bytes <= 0 || en.TxnID <= 0 || en.Label == "":
		t.Fatalf("%s: %+v, want %d rows total and loaded, bytes, a txn id and a label", what, en, rows)
	case en.DeadLettered != deadLettered:
		t.Fatalf("%s: dead_lettered %d, want %d", what, en.DeadLettered, deadLettered)
	}
}

// errLostAck is the answer of a store save that was made durable anyway.
var errLostAck = errors.New("injected: the save is durable, its acknowledgement was lost")

// lostAckStore saves like its Store, but the first save for which match
// (previous saved state, new state) is true reports errLostAck after it is
// durable: the store's state is what a process killed right after that
// save leaves behind, before anything else (the ledger append) happened.
type lostAckStore struct {
	checkpoint.Store
	match func(prev, st *checkpoint.State) bool
	mu    sync.Mutex
	prev  *checkpoint.State
	fired bool
}

func (s *lostAckStore) Save(ctx context.Context, st *checkpoint.State) error {
	if err := s.Store.Save(ctx, st); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	hit := !s.fired && s.match(s.prev, st)
	s.prev = st.Clone()
	if hit {
		s.fired = true
		return errLostAck
	}
	return nil
}

// decides matches the save that decides checkpoint id (a heal of it when
// healed > 0).
func decides(id uint64, healed int) func(prev, st *checkpoint.State) bool {
	return func(prev, st *checkpoint.State) bool {
		d := st.Decided
		if d == nil || d.ID != id || d.Healed != healed || d.Committed {
			return false
		}
		return prev == nil || prev.Decided == nil || prev.Decided.ID != id || prev.Decided.Healed != healed
	}
}

// marksCommitted matches the save that marks a decided, non-empty
// checkpoint committed.
func marksCommitted(prev, st *checkpoint.State) bool {
	return st.Decided != nil && st.Decided.Committed && !st.Decided.Empty &&
		(prev == nil || prev.Decided == nil || prev.Decided.ID != st.Decided.ID || !prev.Decided.Committed)
}
