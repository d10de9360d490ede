package table

import "io"

// prepare parses body under spec into a staged Batch. On a load error the
// returned Batch (non-nil) still carries the counters read so far.
func (t *Table) prepare(spec LoadSpec, body io.Reader) (*Batch, error) {
	m := t.meta.Load()
	b := &Batch{meta: m}
	p, err := newPlan(m, spec, t.now())
	if err != nil {
		return b, err
	}
	if p.partial {
		b.partial, b.incomplete = p.loaded, p.incomplete
	}
	cr := &countingReader{r: body}
	if spec.Format == FormatJSON {
		err = p.readJSON(cr, b)
	} else {
		err = p.readCSV(cr, b)
	}
	b.LoadBytes = cr.n
	if err != nil {
		if e, ok := err.(*Error); ok {
			b.FirstErrorMsg = e.Msg
		}
		return b, err
	}
	return b, nil
}
