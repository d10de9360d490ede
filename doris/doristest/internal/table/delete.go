package table

import (
	"strings"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// DeleteWhere removes the visible rows for which where holds (DELETE FROM …
// WHERE) and returns how many went. Doris's rules (fe
// nereids/trees/plans/commands/DeleteFromCommand.java):
//   - DUPLICATE and AGGREGATE tables take a delete predicate: a conjunction
//     (AND only) of `column op literal` (= != < <= > >=), `column IS [NOT]
//     NULL` and `column [NOT] IN (literals)`; no float/double column; on an
//     AGGREGATE table key columns only. Anything else is refused with
//     Doris's message.
//   - UNIQUE (merge-on-write) tables take any predicate (Doris rewrites the
//     statement into a load of delete-sign rows, DeleteFromUsingCommand);
//     here any predicate of the emulated expression subset (expr.go). With a
//     sequence column the key stays as a tombstone holding its sequence, as
//     a delete-sign row does.
//
// Errors are *Error with Doris's text. Snapshots taken before keep their rows.
func (t *Table) DeleteWhere(where string) (int64, error) {
	m := t.meta.Load()
	if strings.TrimSpace(where) == "" {
		return 0, feAnalysis("delete command must contain filter")
	}
	pred, err := parseExpr(where)
	if err != nil {
		return 0, feAnalysis("%v", err)
	}
	for _, ref := range columnRefs(pred, nil) {
		if _, ok := m.col(ref); !ok {
			return 0, feAnalysis("Unknown column '%s' in 'table list'", ref)
		}
	}
	if m.s.Keys != schema.UniqueKeys {
		if err := checkDeletePredicate(m, pred, where); err != nil {
			return 0, err
		}
	}
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if t.meta.Load() != m {
		return 0, feAnalysis("table %s changed schema during DELETE; retry", m.s.Name)
	}
	match := func(row []any) (bool, error) {
		v, err := eval(pred, rowLookup{m: m, row: row})
		if err != nil {
			return false, feAnalysis("%v", err)
		}
		return v.v != nil && truthy(v), nil
	}
	var n int64
	if !m.keyedModel() {
		var out rowStore
		var buf []any
		var scratch []byte
		w := len(m.types)
		for i := range st.dup.len() {
			buf = st.dup.row(i, w, buf)
			del, err := match(buf)
			if err != nil {
				return 0, err
			}
			if del {
				n++
				continue
			}
			scratch = out.addRow(buf, scratch)
		}
		if n > 0 {
			st.dup = out
		}
	} else {
		var gone [][]byte
		var err error
		st.keyed.each(func(k []byte, e entry) bool {
			if e.deleted {
				return true
			}
			var del bool
			if del, err = match(e.row); err != nil {
				return false
			}
			if del {
				gone = append(gone, k)
			}
			return true
		})
		if err != nil {
			return 0, err
		}
		for _, k := range gone {
			if m.hasSeq() {
				e, _ := st.keyed.get(k)
				st.keyed.put(k, entry{seq: e.seq, deleted: true})
			} else {
				st.keyed.del(k)
			}
		}
		n = int64(len(gone))
	}
	if n > 0 {
		st.snap = nil
		st.version++
	}
	return n, nil
}

// rowLookup resolves column names against one stored row.
type rowLookup struct {
	m   *tableMeta
	row []any
}

func (r rowLookup) lookup(name string) (val, bool) {
	i, ok := r.m.col(name)
	if !ok {
		return val{}, false
	}
	return val{v: r.row[i], t: &r.m.types[i]}, true
}

// checkDeletePredicate is DeleteFromCommand.checkPredicate / checkColumn.
func checkDeletePredicate(m *tableMeta, n node, where string) error {
	notSupported := func() error {
		return feAnalysis("Where clause only supports compound predicate, binary predicate, is_null predicate or in predicate. But we meet %s", where)
	}
	isLiteral := func(x node) bool {
		switch v := x.(type) {
		case litNode:
			return true
		case negNode:
			_, ok := v.x.(litNode)
			return ok
		}
		return false
	}
	column := func(x node) (string, bool) {
		c, ok := x.(colNode)
		return c.name, ok
	}
	checkCol := func(name string) error {
		i, _ := m.col(name)
		if m.types[i].kind == kFloat {
			return feAnalysis("Column[%s] type is float or double.", m.s.Columns[i].Name)
		}
		if m.s.Keys == schema.AggregateKeys && !isKeyIndex(m, i) {
			return feAnalysis("delete predicate on value column only supports Unique table with merge-on-write enabled and Duplicate table, but Table[%s] is an Aggregate table.", m.s.Name)
		}
		return nil
	}
	var walk func(x node, underNot bool) error
	walk = func(x node, underNot bool) error {
		switch v := x.(type) {
		case binNode:
			switch v.op {
			case "AND":
				if underNot {
					return notSupported()
				}
				if err := walk(v.l, false); err != nil {
					return err
				}
				return walk(v.r, false)
			case "=", "==", "!=", "<>", "<", "<=", ">", ">=":
				c, ok := column(v.l)
				if !ok {
					return feAnalysis("Left expr of binary predicate should be column name, predicate: %s", where)
				}
				if !isLiteral(v.r) {
					return feAnalysis("Right expr of binary predicate should be value, predicate: %s", where)
				}
				return checkCol(c)
			}
		case isNullNode:
			c, ok := column(v.x)
			if !ok {
				return feAnalysis("Child expr of is_null predicate should be column name, predicate: %s", where)
			}
			return checkCol(c)
		case inNode:
			c, ok := column(v.x)
			if !ok {
				return feAnalysis("Left expr of in predicate should be column name, predicate: %s", where)
			}
			for _, it := range v.list {
				if !isLiteral(it) {
					return feAnalysis("Child of in predicate should be value, but get %s", where)
				}
			}
			return checkCol(c)
		case notNode:
			if underNot {
				return notSupported()
			}
			return walk(v.x, true)
		}
		return notSupported()
	}
	if err := walk(n, false); err != nil {
		return err
	}
	return nil
}

func isKeyIndex(m *tableMeta, i int) bool {
	for _, k := range m.keyIdx {
		if k == i {
			return true
		}
	}
	return false
}
