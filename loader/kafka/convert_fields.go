package kafka

import (
	"bytes"
	"slices"
	"sync/atomic"
)

// maxNamedFields bounds how many distinct unknown field names a Converter
// reports (OnUnknownField): beyond it fields are only counted.
const maxNamedFields = 64

// fieldWatch counts the top-level JSON fields of rows that are not columns
// of the table. Doris's JSON reader matches each key exactly (byte for
// byte, after unescaping) against the load's column names and silently
// ignores keys that match none (apache/doris
// be/src/vec/exec/format/json/new_json_reader.cpp,
// NewJsonReader::_simdjson_set_column_value: "This key is not exist in slot
// desc, just ignore"); so such a field's data vanishes without an error.
type fieldWatch struct {
	known   map[string]struct{}
	counter *atomic.Int64
	onNew   func(name string)
	named   map[string]struct{}
	// prev holds the known keys of the previous row by position: rows of a
	// topic usually repeat their keys in the same order, so a byte compare
	// replaces the map lookup (Doris's JSON reader does the same).
	prev   [][]byte
	prevOK []bool
	// rowUnknown: the last scanned row has a field that is not known
	// (schema evolution looks at the row only then).
	rowUnknown bool
}

// WatchFields makes c count, in counter, every top-level field of a JSON
// row (formats json and debezium) whose name is not in columns (the
// table's columns as the load maps them; the metadata columns and the
// delete sign are always known), and call onNew (nil: none) once per
// distinct unknown name, for the first maxNamedFields names. Keys written
// with JSON escapes are not checked. The steady state allocates nothing:
// only a new name allocates, once. columns nil turns watching off.
func (c *Converter) WatchFields(columns []string, counter *atomic.Int64, onNew func(name string)) {
	c.watch = c.newFieldWatch(columns, counter, onNew)
}

// newFieldWatch is the watch WatchFields installs (nil for nil columns or
// CSV), for a caller that scans rows itself (routed tables).
func (c *Converter) newFieldWatch(columns []string, counter *atomic.Int64, onNew func(name string)) *fieldWatch {
	if columns == nil || c.format == FormatCSV {
		return nil
	}
	w := &fieldWatch{known: map[string]struct{}{}, counter: counter, onNew: onNew, named: map[string]struct{}{}}
	// slices.Concat, not append: append could write into spare capacity of
	// the caller's slice.
	for _, n := range slices.Concat(columns, []string{DeleteSignColumn, c.meta.Topic, c.meta.Partition, c.meta.Offset, c.meta.Timestamp}) {
		if n != "" {
			w.known[n] = struct{}{}
		}
	}
	return w
}

// scan checks the top-level keys of the JSON object row (valid JSON: the
// converter validated it), like scanEnvelope walks an envelope.
func (w *fieldWatch) scan(row []byte) {
	w.rowUnknown = false
	i := skipSpace(row, 0)
	if i >= len(row) || row[i] != '{' {
		return
	}
	i = skipSpace(row, i+1)
	for idx := 0; i < len(row) && row[i] == '"'; idx++ {
		kEnd := skipStringFast(row, i)
		if key := row[i+1 : kEnd-1]; bytes.IndexByte(key, '\\') < 0 {
			w.checkAt(idx, key)
		}
		i = skipSpace(row, kEnd) // at ':'
		if i >= len(row) {
			return
		}
		i = skipSpace(row, i+1)
		if i >= len(row) {
			return
		}
		if row[i] == '"' {
			i = skipStringFast(row, i)
		} else {
			i = skipValue(row, i)
		}
		i = skipSpace(row, i)
		if i < len(row) && row[i] == ',' {
			i = skipSpace(row, i+1)
		}
	}
}

// checkAt checks the key at position idx of the row.
func (w *fieldWatch) checkAt(idx int, key []byte) {
	if idx < len(w.prev) && w.prevOK[idx] && bytes.Equal(w.prev[idx], key) {
		return // the known key of the previous row at this position
	}
	if _, ok := w.known[string(key)]; ok { // no allocation: map lookup of string(bytes)
		if idx < maxNamedFields {
			for len(w.prev) <= idx {
				w.prev, w.prevOK = append(w.prev, nil), append(w.prevOK, false)
			}
			w.prev[idx], w.prevOK[idx] = append(w.prev[idx][:0], key...), true // reuses the slot's memory
		}
		return
	}
	if idx < len(w.prev) {
		w.prevOK[idx] = false
	}
	w.rowUnknown = true
	if w.counter != nil {
		w.counter.Add(1)
	}
	if w.onNew == nil || len(w.named) >= maxNamedFields {
		return
	}
	if _, seen := w.named[string(key)]; seen {
		return
	}
	name := string(key)
	w.named[name] = struct{}{}
	w.onNew(name)
}

// skipStringFast is skipString with bytes.IndexByte finding each quote (a
// quote preceded by an odd number of backslashes is escaped): long string
// values are the bulk of a row's bytes.
func skipStringFast(v []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(v[j:], '"')
		if k < 0 {
			return len(v)
		}
		j += k
		n := 0
		for p := j - 1; p > i && v[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}
