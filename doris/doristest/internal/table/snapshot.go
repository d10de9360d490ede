package table

// Snapshot is the table's visible rows at one moment, shared with the table
// rather than copied: rows are never changed in place once visible (Apply
// appends or replaces whole rows, DELETE and TRUNCATE swap in new slices), so
// a Snapshot stays valid while later loads commit. Values are nil, int64,
// float64 or string, in schema column order; callers must not modify them.
type Snapshot struct {
	rows  [][]any  // keyed tables
	dup   rowStore // duplicate tables
	width int
	isDup bool
}

// Len is the number of rows.
func (s Snapshot) Len() int {
	if s.isDup {
		return s.dup.len()
	}
	return len(s.rows)
}

// Row returns row i. Duplicate rows are decoded into dst when it is large
// enough (so a scan can reuse one buffer); other rows are the table's own
// (not to be modified).
func (s Snapshot) Row(i int, dst []any) []any {
	if s.isDup {
		return s.dup.row(i, s.width, dst)
	}
	return s.rows[i]
}

// Snapshot returns the visible rows without copying them. For a Duplicate
// table it is the row slice itself; for Unique and Aggregate tables a slice
// of the live rows, rebuilt only when the version changed since the last
// Snapshot. Rows are in no particular order (like a Doris scan).
func (t *Table) Snapshot() Snapshot {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if !t.meta.keyedModel() {
		return Snapshot{dup: st.dup.view(), width: len(t.meta.types), isDup: true}
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
