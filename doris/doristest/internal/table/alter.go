package table

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Alter replaces the schema (ALTER TABLE … ADD / DROP / MODIFY COLUMN, the
// light and the emulated heavy schema change alike): from[i] is the index in
// the current schema of s's column i, or -1 for an added column, which
// existing rows read as its default, NULL when it has none (BE
// segment_v2/segment.cpp new_default_iterator: a column a rowset lacks reads
// as its default). A modified column's values are converted to the new type.
// The key columns of a UNIQUE or AGGREGATE table must stay as they are (the
// caller refuses such changes). Snapshots taken before keep the old rows.
//
// A load prepared under the old schema and applied after Alter is remapped by
// column name at Apply the same way: its rows lack added columns and lose
// dropped ones (Doris plans a load with the schema of its begin and commits
// it after a light schema change; see docs/emulator.md).
func (t *Table) Alter(s *schema.Table, from []int) error {
	nm, err := newMeta(s)
	if err != nil {
		return err
	}
	if len(from) != len(s.Columns) {
		return fmt.Errorf("table %s: alter maps %d columns, the new schema has %d", s.Name, len(from), len(s.Columns))
	}
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	old := t.meta.Load()
	if nm.keyedModel() {
		if !slices.Equal(keyTypes(old, old.keyIdx), keyTypes(nm, nm.keyIdx)) || !sameKeys(from, old.keyIdx, nm.keyIdx) {
			return fmt.Errorf("table %s: changing the key columns of a %s KEY table is not emulated by doristest", s.Name, s.Keys)
		}
	}
	mig := newMigration(old, nm, from, t.now())
	if nm.keyedModel() {
		keyed := newKeyStore(nm.keyIdx, len(nm.types))
		st.keyed.each(func(k []byte, e entry) bool {
			if !e.deleted {
				e.row = mig.row(e.row)
			}
			keyed.put(k, e)
			return true
		})
		st.keyed = keyed
	} else {
		st.dup = mig.store(&st.dup)
	}
	t.meta.Store(nm)
	st.snap = nil
	st.version++
	return nil
}

func keyTypes(m *tableMeta, idx []int) []string {
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = strings.ToLower(m.s.Columns[k].Name) + " " + m.types[k].raw
	}
	return out
}

// sameKeys reports whether the new key columns are the old ones, in order.
func sameKeys(from, oldKeys, newKeys []int) bool {
	if len(oldKeys) != len(newKeys) {
		return false
	}
	for i, k := range newKeys {
		if from[k] != oldKeys[i] {
			return false
		}
	}
	return true
}

// migration rewrites rows of one schema into another.
type migration struct {
	old, nm *tableMeta
	from    []int
	convert []bool // new column i changes type
	now     time.Time
}

func newMigration(old, nm *tableMeta, from []int, now time.Time) *migration {
	mg := &migration{old: old, nm: nm, from: from, convert: make([]bool, len(from)), now: now}
	for i, f := range from {
		mg.convert[i] = f >= 0 && old.types[f].raw != nm.types[i].raw
	}
	return mg
}

// row returns row (old schema) in the new schema.
func (mg *migration) row(row []any) []any {
	out := make([]any, len(mg.from))
	for i, f := range mg.from {
		switch {
		case f < 0:
			out[i] = mg.nm.defaultFor(i, mg.now)
		case mg.convert[i] && row[f] != nil:
			v, err := convertText(mg.nm.types[i], printable(row[f]))
			if err != nil {
				v = nil
			}
			out[i] = v
		default:
			out[i] = row[f]
		}
	}
	return out
}

// store rewrites a Duplicate row store.
func (mg *migration) store(s *rowStore) rowStore {
	var out rowStore
	var buf []any
	var scratch []byte
	n := len(mg.old.types)
	for i := range s.len() {
		buf = s.row(i, n, buf)
		scratch = out.addRow(mg.row(buf), scratch)
	}
	return out
}

// remapBatch rewrites a batch prepared under b.meta for m, matching columns
// by name (case-insensitive, as Doris names are). Callers hold st.mu.
func (t *Table) remapBatch(b *Batch, m *tableMeta) {
	from := make([]int, len(m.s.Columns))
	for i, c := range m.s.Columns {
		j, ok := b.meta.col(c.Name)
		if !ok {
			j = -1
		}
		from[i] = j
	}
	mig := newMigration(b.meta, m, from, t.now())
	switch {
	case b.dup.len() == 0:
	case m.keyedModel():
		var out rowStore
		var scratch []byte
		for i := range b.dup.len() {
			r := decodeStaged(b.dup.at(b.dup.refs[i]), len(b.meta.types))
			r.vals = mig.row(r.vals)
			scratch = encodeStaged(scratch[:0], r)
			out.add(scratch)
		}
		b.dup = out
	default:
		b.dup = mig.store(&b.dup)
	}
	if b.partial != nil {
		p := make([]bool, len(from))
		for i, f := range from {
			p[i] = f >= 0 && b.partial[f]
		}
		b.partial = p
	}
	b.meta = m
}
