package table

import (
	"strings"
	"time"

	"github.com/doris-sink/doris-sink/doris/schema"
)

// Target modes: how a table column gets its value in one load.
const (
	tmDefault = iota // not loaded: DEFAULT or NULL
	tmSrc            // a source column of the same name
	tmExpr           // a `columns` mapping expression
)

type target struct {
	mode int
	src  int // index in loadPlan.srcNames (tmSrc)
	der  int // index in loadPlan.derived (tmExpr)
}

type derivedCol struct {
	name string
	expr node
}

// loadPlan is what the FE would plan for one Stream Load (streamLoadPut):
// source columns, mapping, defaults, filters, delete sign and sequence.
type loadPlan struct {
	m          *tableMeta
	spec       LoadSpec
	srcNames   []string // CSV positional columns / JSON keys
	srcLower   map[string]int
	derived    []derivedCol
	derLower   map[string]int
	targets    []target
	loaded     []bool // per table column: given by the load
	defaults   []any
	incomplete bool // partial load leaves a NOT NULL column without default unset
	where      node
	del        node   // MERGE `delete` predicate
	delName    string // source/derived name feeding __DORIS_DELETE_SIGN__ (APPEND)
	seqName    string // name feeding hidden __DORIS_SEQUENCE_COL__ (sequence_type tables)
	partial    bool
}

// splitTopLevel splits s at commas outside parentheses and quotes.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func newPlan(m *tableMeta, spec LoadSpec, now time.Time) (*loadPlan, error) {
	s := m.s
	p := &loadPlan{m: m, spec: spec, srcLower: map[string]int{}, derLower: map[string]int{}}
	notEmulated := func(err error) error {
		return feAnalysis("%v", err)
	}
	// `columns` (docs/doris-facts.md §1.4): plain names are source columns, name=expr
	// are mappings; mappings whose target is not a table column are temporary
	// names later mappings may use.
	if strings.TrimSpace(spec.Columns) != "" {
		for _, item := range splitTopLevel(spec.Columns) {
			if strings.TrimSpace(item) == "" {
				return nil, feAnalysis("empty item in columns %q", spec.Columns)
			}
			toks, err := tokenize(item)
			if err != nil {
				return nil, notEmulated(err)
			}
			if len(toks) == 2 && toks[0].kind == tIdent {
				p.addSrc(toks[0].text)
				continue
			}
			if len(toks) > 2 && toks[0].kind == tIdent && toks[1].kind == tOp && toks[1].text == "=" {
				eq := strings.IndexByte(item, '=')
				e, err := parseExpr(item[eq+1:])
				if err != nil {
					return nil, notEmulated(err)
				}
				p.derLower[strings.ToLower(toks[0].text)] = len(p.derived)
				p.derived = append(p.derived, derivedCol{name: toks[0].text, expr: e})
				continue
			}
			return nil, feAnalysis("columns item %q is not emulated by doristest", strings.TrimSpace(item))
		}
	}
	if len(p.srcNames) == 0 {
		// FE: without file field names the base schema is the source, plus
		// hidden_columns the table really has (Load.initColumns).
		for _, c := range s.Columns {
			p.addSrc(c.Name)
		}
		for _, h := range spec.HiddenColumns {
			switch {
			case strings.EqualFold(h, schema.DeleteSignColumn) && s.Keys == schema.UniqueKeys,
				strings.EqualFold(h, schema.SequenceColumn) && m.seqType != nil:
				p.addSrc(h)
			}
		}
	}
	// Mapping references must resolve to a source column or an earlier mapping.
	for i, d := range p.derived {
		for _, ref := range columnRefs(d.expr, nil) {
			l := strings.ToLower(ref)
			if _, ok := p.srcLower[l]; ok {
				continue
			}
			if j, ok := p.derLower[l]; ok && j < i {
				continue
			}
			return nil, feAnalysis("Unknown column '%s' in 'table list'", ref)
		}
	}
	p.partial = spec.PartialColumns
	if p.partial && s.Keys != schema.UniqueKeys {
		return nil, feAnalysis("Partial update is only allowed on unique table with merge-on-write enabled.")
	}
	p.targets = make([]target, len(s.Columns))
	p.loaded = make([]bool, len(s.Columns))
	p.defaults = make([]any, len(s.Columns))
	for i, c := range s.Columns {
		l := strings.ToLower(c.Name)
		if j, ok := p.derLower[l]; ok {
			p.targets[i] = target{mode: tmExpr, der: j}
		} else if j, ok := p.srcLower[l]; ok {
			p.targets[i] = target{mode: tmSrc, src: j}
		} else {
			p.targets[i] = target{mode: tmDefault}
			p.defaults[i] = m.defaultFor(i, now)
			if !c.Nullable && !m.defs[i].has {
				if !p.partial {
					// FE planning (Load.initColumns / checkUnspecifiedCols).
					return nil, feAnalysis("Column has no default value. column: %s", c.Name)
				}
				p.incomplete = true
			}
			continue
		}
		p.loaded[i] = true
	}
	if p.partial {
		for _, k := range m.keyIdx {
			if !p.loaded[k] {
				return nil, feAnalysis("Partial update should include all key columns, missing: %s", s.Columns[k].Name)
			}
		}
	}
	if spec.MergeType != "" && spec.MergeType != MergeAppend && s.Keys != schema.UniqueKeys {
		return nil, feAnalysis("load by MERGE or DELETE is only supported in unique tables.")
	}
	// Sequence column checks (docs/doris-facts.md §1.4 `function_column.sequence_col`).
	switch {
	case spec.SequenceCol != "" && !m.hasSeq():
		return nil, feAnalysis("There is no sequence column in the table %s", s.Name)
	case m.seqType != nil && spec.SequenceCol == "" && !p.hasName(schema.SequenceColumn):
		return nil, feAnalysis("Table %s has sequence column, need to specify the sequence column", s.Name)
	case m.seqType != nil:
		p.seqName = spec.SequenceCol
		if p.seqName == "" {
			p.seqName = schema.SequenceColumn
		}
		if !p.hasName(p.seqName) {
			return nil, feAnalysis("Unknown column '%s' in 'table list'", p.seqName)
		}
	}
	if s.Keys == schema.UniqueKeys && p.hasName(schema.DeleteSignColumn) {
		p.delName = schema.DeleteSignColumn
	}
	var err error
	if strings.TrimSpace(spec.Where) != "" {
		if p.where, err = p.parsePredicate(spec.Where); err != nil {
			return nil, err
		}
	}
	if spec.MergeType == MergeMerge {
		if p.del, err = p.parsePredicate(spec.Delete); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *loadPlan) addSrc(name string) {
	p.srcLower[strings.ToLower(name)] = len(p.srcNames)
	p.srcNames = append(p.srcNames, name)
}

// hasName reports whether name is a table, mapped or source column.
func (p *loadPlan) hasName(name string) bool {
	l := strings.ToLower(name)
	if _, ok := p.m.byName[l]; ok {
		return true
	}
	if _, ok := p.derLower[l]; ok {
		return true
	}
	_, ok := p.srcLower[l]
	return ok
}

func (p *loadPlan) parsePredicate(s string) (node, error) {
	e, err := parseExpr(s)
	if err != nil {
		return nil, feAnalysis("%v", err)
	}
	for _, ref := range columnRefs(e, nil) {
		if !p.hasName(ref) {
			return nil, feAnalysis("Unknown column '%s' in 'table list'", ref)
		}
	}
	return e, nil
}

// rowEnv resolves names while one row is processed: after mapping, table
// columns (typed values) first, then mappings, then raw source values.
type rowEnv struct {
	p     *loadPlan
	src   []any
	der   []val
	nDer  int // mappings evaluated so far
	tgt   []any
	typed bool
}

func (e *rowEnv) lookup(name string) (val, bool) {
	l := name
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			l = strings.ToLower(name)
			break
		}
	}
	if e.typed {
		if i, ok := e.p.m.byName[l]; ok {
			return val{v: e.tgt[i], t: &e.p.m.types[i]}, true
		}
	}
	if i, ok := e.p.derLower[l]; ok && i < e.nDer {
		return e.der[i], true
	}
	if i, ok := e.p.srcLower[l]; ok {
		return val{v: e.src[i]}, true
	}
	return val{}, false
}
