package table

import "github.com/doris-sink/doris-sink/doris/schema"

// Snapshot is the table's visible rows at one moment, shared with the table
// rather than copied: rows are never changed in place once visible (Apply
// appends or replaces whole rows, DELETE and TRUNCATE swap in new slices), so
// a Snapshot stays valid while later loads commit. Values are nil, int64,
// float64 or string, in schema column order; callers must not modify them.
type Snapshot struct {
	schema *schema.Table
	rows   [][]any  // keyed tables
	dup    rowStore // duplicate tables
	width  int
	isDup  bool
}

// Schema is the schema the rows are laid out in.
func (s Snapshot) Schema() *schema.Table { return s.schema }

// Len is the number of rows.
func (s Snapshot) Len() int {
	if s.isDup {
		return s.dup.len()
	}
	return len(s.rows)
}

// Value returns column col (schema index) of row i; ok is false past the
// row's width.
func (s Snapshot) Value(i, col int) (v any, ok bool) {
	if s.isDup {
		if col >= s.width {
			return nil, false
		}
		return s.dup.value(i, col), true
	}
	if r := s.rows[i]; col < len(r) {
		return r[col], true
	}
	return nil, false
}

// Snapshot returns the visible rows without copying them. For a Duplicate
// table it is the row slice itself; for Unique and Aggregate tables a slice
// of the live rows, rebuilt only when the version changed since the last
// Snapshot. Rows are in no particular order (like a Doris scan).
func (t *Table) Snapshot() Snapshot {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	m := t.meta.Load()
	if !m.keyedModel() {
		return Snapshot{schema: m.s, dup: st.dup.view(), width: len(m.types), isDup: true}
	}
	if st.snap == nil || st.snapVersion != st.version {
		rows := make([][]any, 0, len(st.keyed))
		for _, e := range st.keyed {
			if !e.deleted {
				rows = append(rows, e.row)
			}
		}
		st.snap, st.snapVersion = rows, st.version
	}
	return Snapshot{schema: m.s, rows: st.snap}
}

// Truncate removes every row (TRUNCATE TABLE). Snapshots taken before keep
// their rows.
func (t *Table) Truncate() {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dup = rowStore{}
	st.keyed = map[string]*entry{}
	st.snap = nil
	st.version++
}
