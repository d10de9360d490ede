package table

import (
	"math/big"
	"slices"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// apply makes a committed batch visible (docs/doris-facts.md §7). Batches are
// applied in commit order; within a batch rows apply in input order, which
// gives the BE memtable's results for every model emulated here.
func (t *Table) apply(b *Batch) {
	if b == nil {
		return
	}
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if b.counting {
		st.cRows += b.LoadedRows()
		st.cBytes += b.LoadBytes
		return
	}
	changed := false
	m := t.meta.Load()
	if b.meta != nil && b.meta != m {
		t.remapBatch(b, m)
	}
	switch m.s.Keys {
	case schema.UniqueKeys:
		for i := range b.dup.len() {
			r := decodeStaged(b.dup.at(b.dup.refs[i]), len(m.types))
			if t.applyUnique(&r, b) {
				changed = true
			}
		}
	case schema.AggregateKeys:
		for i := range b.dup.len() {
			r := decodeStaged(b.dup.at(b.dup.refs[i]), len(m.types))
			t.applyAggregate(&r)
			changed = true
		}
	default:
		if b.dup.len() > 0 {
			st.dup.appendStore(&b.dup)
			b.dup = rowStore{} // adopted: the batch must not append again
			changed = true
		}
	}
	if changed {
		st.version++
	}
}

// applyUnique is merge-on-write UNIQUE KEY (docs/doris-facts.md §7): one row per
// key; with a sequence column the new row (or delete) wins iff
// new_seq >= old_seq, so equal sequences let the later row win. A delete
// keeps the key's sequence as a tombstone (see entry.seq).
func (t *Table) applyUnique(r *stagedRow, b *Batch) bool {
	m := t.meta.Load()
	key := encodeKey(nil, m.keyIdx, r.vals)
	e, found := t.st.keyed.get(key)
	live := found && !e.deleted
	row, seq := r.vals, r.seq
	if b.partial != nil && !r.del {
		if live {
			// partial_columns: only the loaded columns change.
			row = e.row // decoded: ours to change
			for i, loaded := range b.partial {
				if loaded {
					row[i] = r.vals[i]
				}
			}
			if m.seqIdx >= 0 && !b.partial[m.seqIdx] {
				seq = e.seq
			}
		} else if b.incomplete {
			return false // a new key needs a value for a NOT NULL column without default
		}
	}
	if m.hasSeq() && found && cmpValues(m.seqColType(), seq, e.seq) < 0 {
		return false // "key with higher sequence id exists"
	}
	if r.del {
		if !m.hasSeq() {
			t.st.keyed.del(key)
			return live
		}
		t.st.keyed.put(key, entry{seq: seq, deleted: true})
		return live
	}
	t.st.keyed.put(key, entry{row: row, seq: seq})
	return true
}

// applyAggregate merges a row into its key with each value column's
// aggregation (docs/doris-facts.md §7).
func (t *Table) applyAggregate(r *stagedRow) {
	m := t.meta.Load()
	key := encodeKey(nil, m.keyIdx, r.vals)
	e, found := t.st.keyed.get(key)
	if !found {
		t.st.keyed.put(key, entry{row: r.vals})
		return
	}
	defer func() { t.st.keyed.put(key, e) }()
	for i, c := range m.s.Columns {
		if slices.Contains(m.keyIdx, i) {
			continue
		}
		old, nv := e.row[i], r.vals[i]
		switch c.Agg {
		case schema.AggSum:
			e.row[i] = sumValues(m.types[i], old, nv)
		case schema.AggMax:
			if nv != nil && (old == nil || cmpValues(m.types[i], nv, old) > 0) {
				e.row[i] = nv
			}
		case schema.AggMin:
			if nv != nil && (old == nil || cmpValues(m.types[i], nv, old) < 0) {
				e.row[i] = nv
			}
		case schema.AggReplaceIfNotNull:
			if nv != nil {
				e.row[i] = nv
			}
		default: // REPLACE (and value columns without an aggregation)
			e.row[i] = nv
		}
	}
}

// sumValues adds two values of type t; NULL + x = x.
func sumValues(t colType, a, b any) any {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	switch t.kind {
	case kInt, kBool:
		return a.(int64) + b.(int64)
	case kFloat:
		return a.(float64) + b.(float64)
	case kLargeInt:
		x, _ := new(big.Int).SetString(a.(string), 10)
		y, _ := new(big.Int).SetString(b.(string), 10)
		return x.Add(x, y).String()
	case kDecimal:
		x, _ := new(big.Rat).SetString(a.(string))
		y, _ := new(big.Rat).SetString(b.(string))
		q := new(big.Rat).Add(x, y)
		// exact: both have t.scale digits; overflow past the precision is kept
		n := new(big.Int).Mul(q.Num(), pow10(t.scale))
		n.Quo(n, q.Denom())
		return scaledString(n, t.scale)
	}
	return b
}

// rows returns the visible rows sorted by key (then full row for DUPLICATE).
func (t *Table) rows() [][]any {
	m := t.meta.Load()
	st := &t.st
	st.mu.Lock()
	var out [][]any
	if m.s.Keys == schema.UniqueKeys || m.s.Keys == schema.AggregateKeys {
		out = make([][]any, 0, st.keyed.keys)
		st.keyed.each(func(_ []byte, e entry) bool {
			if !e.deleted {
				out = append(out, e.row)
			}
			return true
		})
	} else {
		n := len(m.types)
		out = make([][]any, st.dup.len())
		for i := range out {
			out[i] = st.dup.row(i, n, nil)
		}
	}
	st.mu.Unlock()
	full := m.s.Keys != schema.UniqueKeys && m.s.Keys != schema.AggregateKeys
	slices.SortStableFunc(out, func(a, b []any) int { return cmpRows(m.types, m.keyIdx, full, a, b) })
	return out
}
