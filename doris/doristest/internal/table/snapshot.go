package table

import "github.com/doris-sink/doris-sink/doris/schema"

// Snapshot is the table's visible rows at one moment, shared with the table
// rather than copied: rows are never changed in place once visible (Apply
// appends or replaces whole rows, DELETE and TRUNCATE swap in new slices), so
// a Snapshot stays valid while later loads commit. Values are nil, int64,
// float64 or string, in schema column order; callers must not modify them.
type Snapshot struct{ rows [][]any }

// Len is the number of rows.
func (s Snapshot) Len() int { return len(s.rows) }

// Row returns row i (not to be modified).
func (s Snapshot) Row(i int) []any { return s.rows[i] }

// Snapshot returns the visible rows without copying them. For a Duplicate
// table it is the row slice itself; for Unique and Aggregate tables a slice
// of the live rows, rebuilt only when the version changed since the last
// Snapshot. Rows are in no particular order (like a Doris scan).
func (t *Table) Snapshot() Snapshot {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if !t.keyed() {
		return Snapshot{rows: st.dup[:len(st.dup):len(st.dup)]}
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
	return Snapshot{rows: st.snap}
}

func (t *Table) keyed() bool {
	k := t.meta.s.Keys
	return k == schema.UniqueKeys || k == schema.AggregateKeys
}

// Truncate removes every row (TRUNCATE TABLE). Snapshots taken before keep
// their rows.
func (t *Table) Truncate() {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dup = nil
	st.keyed = map[string]*entry{}
	st.snap = nil
	st.version++
}
