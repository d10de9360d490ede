package table

import (
	"fmt"
	"strconv"
)

// maxErrorLines bounds Batch.ErrorLines, like the BE's error log bound.
const maxErrorLines = 100

// stagedRow is one converted row waiting for commit.
type stagedRow struct {
	vals []any
	del  bool
	seq  any
}

var deleteSignType = colType{raw: "TINYINT", kind: kInt, bits: 8}

// filter counts a filtered row and records its reason like the BE's
// _load_error_log ("Reason: … src line […]; ").
func (b *Batch) filter(reason string, line func() string) {
	b.FilteredRows++
	if len(b.ErrorLines) < maxErrorLines {
		src := line()
		if len(src) > 1024 {
			src = src[:1024] + "..."
		}
		b.ErrorLines = append(b.ErrorLines, fmt.Sprintf("Reason: %s. src line [%s]; ", reason, src))
	}
}

func printable(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case jsonRaw:
		return string(x)
	}
	return fmt.Sprint(v)
}

// process runs one source record (values in srcNames order: nil, CSV text or
// jsonRaw) through mapping, conversion, `where`, and the sink's validation,
// in the BE's order: conversion (strict-mode failures filtered) → where
// (unselected) → NOT NULL / length checks (filtered). docs/doris-facts.md §1.4, §8.
func (p *loadPlan) process(b *Batch, src []any, line func() string) {
	b.TotalRows++
	m := p.m
	env := &rowEnv{p: p, src: src}
	if len(p.derived) > 0 {
		env.der = make([]val, len(p.derived))
		for i, d := range p.derived {
			v, err := eval(d.expr, env)
			if err != nil {
				b.filter(err.Error(), line)
				return
			}
			env.der[i] = v
			env.nDer = i + 1
		}
	}
	vals := make([]any, len(m.types))
	sinkErr := ""
	for i, tg := range p.targets {
		var raw any
		switch tg.mode {
		case tmDefault:
			vals[i] = p.defaults[i]
			continue
		case tmSrc:
			raw = src[tg.src]
		case tmExpr:
			raw = env.der[tg.der].v
		}
		v, err := convert(m.types[i], raw)
		switch err {
		case nil:
		case errInvalid:
			if p.spec.StrictMode {
				b.filter(fmt.Sprintf("column(%s) value is incorrect while strict mode is true, src value is %s",
					m.s.Columns[i].Name, printable(raw)), line)
				return
			}
		case errTooLong:
			if sinkErr == "" {
				s := printable(raw)
				first := s
				if len(first) > 32 {
					first = first[:32]
				}
				sinkErr = fmt.Sprintf("column_name[%s], the length of input is too long than schema. first 32 bytes of input str: [%s] schema length: %d; actual length: %d; ",
					m.s.Columns[i].Name, first, m.types[i].maxLen, len(s))
			}
		}
		vals[i] = v
	}
	env.tgt, env.typed = vals, true
	if p.where != nil {
		v, err := eval(p.where, env)
		if err != nil || v.v == nil || !truthy(v) {
			b.UnselectedRows++
			return
		}
	}
	if sinkErr != "" {
		b.filter(sinkErr, line)
		return
	}
	for i, c := range m.s.Columns {
		if vals[i] == nil && !c.Nullable && (p.loaded[i] || !p.partial) {
			b.filter(fmt.Sprintf("column(%s) values is null while columns is not nullable", c.Name), line)
			return
		}
	}
	r := stagedRow{vals: vals}
	switch p.spec.MergeType {
	case MergeDelete:
		r.del = true
	case MergeMerge:
		v, err := eval(p.del, env)
		r.del = err == nil && v.v != nil && truthy(v)
	default:
		if p.delName != "" {
			if v, ok := env.lookup(p.delName); ok {
				if d, err := convert(deleteSignType, v.v); err == nil && d != nil {
					r.del = d.(int64) != 0
				}
			}
		}
	}
	if m.seqIdx >= 0 {
		r.seq = vals[m.seqIdx]
	} else if m.seqType != nil {
		if v, ok := env.lookup(p.seqName); ok {
			s, err := convert(*m.seqType, v.v)
			if err != nil && p.spec.StrictMode {
				b.filter(fmt.Sprintf("column(%s) value is incorrect while strict mode is true, src value is %s",
					"__DORIS_SEQUENCE_COL__", printable(v.v)), line)
				return
			}
			r.seq = s
		}
	}
	if !m.keyedModel() {
		b.scratch = b.dup.addRow(vals, b.scratch)
		return
	}
	b.scratch = encodeStaged(b.scratch[:0], r)
	b.dup.add(b.scratch)
}

// encodeStaged appends a staged keyed row: delete flag, sequence, values.
func encodeStaged(b []byte, r stagedRow) []byte {
	var f byte
	if r.del {
		f = recDeleted
	}
	b = append(b, f)
	b = appendValue(b, r.seq)
	return encodeRow(b, r.vals)
}

// decodeStaged is the inverse of encodeStaged for width values.
func decodeStaged(b []byte, width int) stagedRow {
	r := stagedRow{del: b[0]&recDeleted != 0}
	var seq [1]any
	decodeRow(b[1:], 1, seq[:])
	r.seq = seq[0]
	r.vals = decodeRow(skipValue(b[1:]), width, nil)
	return r
}

func quoteSep(s string) string { return strconv.Quote(s) }
