package table

import (
	"bytes"
	"encoding/json"
	"io"
)

// countingReader counts the bytes read from a body (LoadBytes, §2.1 #11).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// countBody is counting mode: it streams the body, counting records (CSV
// lines, JSON lines or outer-array elements) and bytes, without conversion.
func countBody(spec LoadSpec, body io.Reader) (*Batch, error) {
	cr := &countingReader{r: body}
	b := &Batch{counting: true}
	var err error
	switch {
	case spec.Format == FormatJSON && !spec.ReadJSONByLine:
		err = countJSONDoc(spec, cr, b)
	case spec.Format == FormatJSON:
		sc := newRecordScanner(cr, csvOpts{delim: spec.LineDelimiter, sep: "\t"})
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			switch {
			case len(line) == 0:
			case spec.StripOuterArray && line[0] == '[':
				var arr []json.RawMessage
				if json.Unmarshal(line, &arr) == nil {
					b.TotalRows += int64(len(arr))
				}
			default:
				b.TotalRows++
			}
		}
		if sc.Err() != nil {
			err = scanError(sc.Err())
		}
	default:
		sc := newRecordScanner(cr, newCSVOpts(spec))
		skip := csvSkip(spec)
		for sc.Scan() {
			if skip > 0 {
				skip--
				continue
			}
			if len(sc.Bytes()) > 0 {
				b.TotalRows++
			}
		}
		if sc.Err() != nil {
			err = scanError(sc.Err())
		}
	}
	b.LoadBytes = cr.n
	return b, err
}

func countJSONDoc(spec LoadSpec, r io.Reader, b *Batch) error {
	dec := json.NewDecoder(r)
	if !spec.StripOuterArray || spec.JSONRoot != "" {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if err == io.EOF {
				return nil
			}
			return parseFailed(err)
		}
		b.TotalRows++
		return trailing(dec)
	}
	tok, err := dec.Token()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return parseFailed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		b.TotalRows++
		return nil
	}
	var el json.RawMessage // reused: Decode appends into its capacity
	for dec.More() {
		if err := dec.Decode(&el); err != nil {
			return parseFailed(err)
		}
		b.TotalRows++
	}
	if _, err := dec.Token(); err != nil {
		return parseFailed(err)
	}
	return trailing(dec)
}
