package table

import "github.com/doris-sink/doris-sink/doris/schema"

// Snapshot is the table's visible rows at one moment, shared with the table
// rather than copied: stored rows are never changed in place (Duplicate rows
// and keyed records are appended to arenas; DELETE, TRUNCATE, ALTER and
// compaction build new ones), so a Snapshot stays valid while later loads
// commit. Values are nil, int64, float64 or string, in schema column order.
type Snapshot struct {
	schema *schema.Table
	arena  rowStore // duplicate rows (refs = the rows), or keyed records
	refs   []uint64 // keyed tables: the live records
	width  int
	isDup  bool
	lay    *recordLayout // keyed tables
}

// Schema is the schema the rows are laid out in.
func (s Snapshot) Schema() *schema.Table { return s.schema }

// Len is the number of rows.
func (s Snapshot) Len() int {
	if s.isDup {
		return s.arena.len()
	}
	return len(s.refs)
}

// Value returns column col (schema index) of row i; ok is false past the
// row's width.
func (s Snapshot) Value(i, col int) (v any, ok bool) {
	if col >= s.width {
		return nil, false
	}
	if s.isDup {
		return s.arena.value(i, col), true
	}
	return s.lay.value(s.arena.at(s.refs[i]), col), true
}

// Snapshot returns the visible rows without copying them: a view of the
// Duplicate row arena, or of the keyed record arena with the list of live
// records (rebuilt only when the version changed since the last Snapshot).
// Rows are in no particular order (like a Doris scan).
func (t *Table) Snapshot() Snapshot {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	m := t.meta.Load()
	if !m.keyedModel() {
		return Snapshot{schema: m.s, arena: st.dup.view(), width: len(m.types), isDup: true}
	}
	if st.snap == nil || st.snapVersion != st.version {
		st.snap, st.snapVersion = st.keyed.liveRefs(), st.version
	}
	return Snapshot{schema: m.s, arena: st.keyed.arena.view(), refs: st.snap, width: len(m.types), lay: st.keyed.lay}
}

// Truncate removes every row (TRUNCATE TABLE). Snapshots taken before keep
// their rows.
func (t *Table) Truncate() {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dup = rowStore{}
	m := t.meta.Load()
	st.keyed = newKeyStore(m.keyIdx, len(m.types))
	st.snap = nil
	st.version++
}
