package table

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Table properties read by the emulator (docs/doris-facts.md §7).
const (
	propSequenceCol  = "function_column.sequence_col"
	propSequenceType = "function_column.sequence_type"
)

// tableState is the Table's lock-protected part.
type tableState struct {
	mu      sync.Mutex
	dup     rowStore  // DUPLICATE rows in load order
	keyed   *keyStore // UNIQUE / AGGREGATE rows by key
	version uint64
	// snap caches Snapshot's live-record list of a keyed table for
	// snapVersion.
	snap        []uint64
	snapVersion uint64
	counting    bool
	cRows       int64
	cBytes      int64
}

// entry is one key of a UNIQUE or AGGREGATE table, as decoded from its
// keyStore record (the caller's to change).
type entry struct {
	row []any
	// seq is the row's sequence value (UNIQUE with a sequence column). It
	// is kept on deleted keys as a tombstone: in merge-on-write the delete
	// row, with its sequence, stays in the table, so a later load with a
	// lower sequence cannot resurrect the key (docs/doris-facts.md §7).
	seq     any
	deleted bool
}

// tableMeta is the immutable description derived from the schema.
type tableMeta struct {
	s       *schema.Table
	types   []colType
	byName  map[string]int // lower-case column name → index
	keyIdx  []int
	seqIdx  int      // real column mapped by function_column.sequence_col, or -1
	seqType *colType // hidden __DORIS_SEQUENCE_COL__ type (sequence_type tables), or nil
	defs    []defaultValue
}

type defaultValue struct {
	has bool
	v   any    // converted default (nil for DEFAULT NULL)
	now string // CURRENT_TIMESTAMP / CURRENT_DATE: evaluated at load time
}

// keyedModel reports whether rows are kept by key (UNIQUE, AGGREGATE)
// rather than appended (DUPLICATE).
func (m *tableMeta) keyedModel() bool {
	return m.s.Keys == schema.UniqueKeys || m.s.Keys == schema.AggregateKeys
}

func (m *tableMeta) hasSeq() bool { return m.seqIdx >= 0 || m.seqType != nil }

func (m *tableMeta) col(name string) (int, bool) {
	i, ok := m.byName[strings.ToLower(name)]
	return i, ok
}

// seqType of the table's sequence values.
func (m *tableMeta) seqColType() colType {
	if m.seqIdx >= 0 {
		return m.types[m.seqIdx]
	}
	return *m.seqType
}

func newMeta(s *schema.Table) (*tableMeta, error) {
	if s == nil || len(s.Columns) == 0 {
		return nil, fmt.Errorf("table: schema has no columns")
	}
	m := &tableMeta{s: s, byName: map[string]int{}, seqIdx: -1}
	for i, c := range s.Columns {
		t, err := parseColType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("table %s column %s: %w", s.Name, c.Name, err)
		}
		switch c.Agg {
		case schema.AggNone, schema.AggSum, schema.AggMax, schema.AggMin, schema.AggReplace, schema.AggReplaceIfNotNull:
		default:
			return nil, fmt.Errorf("table %s column %s: aggregation %s is not emulated by doristest", s.Name, c.Name, c.Agg)
		}
		m.types = append(m.types, t)
		m.byName[strings.ToLower(c.Name)] = i
		d := defaultValue{}
		if c.Default != nil {
			d.has = true
			switch u := strings.ToUpper(strings.TrimSpace(*c.Default)); {
			case u == "NULL":
			case strings.HasPrefix(u, "CURRENT_TIMESTAMP") || u == "NOW()" || u == "CURRENT_DATE":
				d.now = u
			default:
				v, err := convertText(t, *c.Default)
				if err != nil {
					return nil, fmt.Errorf("table %s column %s: invalid default %q", s.Name, c.Name, *c.Default)
				}
				d.v = v
			}
		}
		m.defs = append(m.defs, d)
	}
	keys := s.KeyColumns
	if len(keys) == 0 && s.Keys == schema.AggregateKeys {
		for _, c := range s.Columns {
			if c.Agg == schema.AggNone {
				keys = append(keys, c.Name)
			}
		}
	}
	for _, k := range keys {
		i, ok := m.col(k)
		if !ok {
			return nil, fmt.Errorf("table %s: key column %s not in schema", s.Name, k)
		}
		m.keyIdx = append(m.keyIdx, i)
	}
	switch s.Keys {
	case schema.DuplicateKeys, "":
	case schema.UniqueKeys, schema.AggregateKeys:
		if len(m.keyIdx) == 0 {
			return nil, fmt.Errorf("table %s: %s KEY table without key columns", s.Name, s.Keys)
		}
	default:
		return nil, fmt.Errorf("table %s: unknown keys type %q", s.Name, s.Keys)
	}
	if s.Keys == schema.UniqueKeys {
		if c := s.Properties[propSequenceCol]; c != "" {
			i, ok := m.col(c)
			if !ok {
				return nil, fmt.Errorf("table %s: sequence column %s not in schema", s.Name, c)
			}
			m.seqIdx = i
		} else if ty := s.Properties[propSequenceType]; ty != "" {
			t, err := parseColType(ty)
			if err != nil {
				return nil, fmt.Errorf("table %s: sequence type: %w", s.Name, err)
			}
			m.seqType = &t
		}
	}
	return m, nil
}

// defaultFor returns the value an unloaded column gets.
func (m *tableMeta) defaultFor(i int, now time.Time) any {
	d := m.defs[i]
	if d.now != "" {
		v, _ := convertText(m.types[i], now.UTC().Format("2006-01-02 15:04:05.000000"))
		return v
	}
	return d.v
}
