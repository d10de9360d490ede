package table

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"
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
	case plainLines(spec):
		b.TotalRows, err = countLines(cr, spec.LineDelimiter, spec.Format == FormatJSON)
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

// plainLines reports whether every record of spec's body is one line with
// nothing to parse for counting: JSON lines without strip_outer_array, or
// CSV without enclose (which may hide a delimiter) or skipped lines, with
// a one-byte line delimiter.
func plainLines(spec LoadSpec) bool {
	d := spec.LineDelimiter
	if d == "" {
		d = "\n"
	}
	if len(d) != 1 {
		return false
	}
	if spec.Format == FormatJSON {
		return spec.ReadJSONByLine && !spec.StripOuterArray
	}
	return spec.Format == FormatCSV && spec.Enclose == "" && csvSkip(spec) == 0
}

// countLines counts the non-empty lines of r (for JSON, lines that are not
// only white space, as the parsing path skips them) reading 256 KiB blocks:
// the counting mode must cost far less than the sink it measures. Unlike
// the parsing path it does not bound a record's size.
func countLines(r io.Reader, delim string, json bool) (int64, error) {
	d := byte('\n')
	if delim != "" {
		d = delim[0]
	}
	buf := make([]byte, 256<<10)
	var rows int64
	var lc lineContent
	for {
		n, err := r.Read(buf)
		blk := buf[:n]
		for len(blk) > 0 {
			i := bytes.IndexByte(blk, d)
			if i < 0 {
				lc.add(blk, json, false)
				break
			}
			if lc.add(blk[:i], json, true) {
				rows++
			}
			lc = lineContent{pend: lc.pend[:0]}
			blk = blk[i+1:]
		}
		if err == io.EOF {
			if lc.add(nil, json, true) {
				rows++
			}
			return rows, nil
		}
		if err != nil {
			return rows, scanError(err)
		}
	}
}

// lineContent tracks whether the line being read has content. For JSON a
// line of white space (Unicode, as bytes.TrimSpace) is empty; the white
// space seen so far is dropped except a rune cut by a block boundary.
type lineContent struct {
	content bool
	pend    []byte // undecided tail: an incomplete rune
}

// add feeds the next part of the line; end says the line is complete.
// It reports whether the line has content.
func (c *lineContent) add(part []byte, json, end bool) bool {
	if c.content {
		return true
	}
	if !json {
		c.content = len(part) > 0
		return c.content
	}
	if len(c.pend) > 0 {
		c.pend = append(c.pend, part...)
		part = c.pend
	}
	keep := 0
	if !end {
		keep = incompleteRuneTail(part)
	}
	if len(bytes.TrimSpace(part[:len(part)-keep])) > 0 {
		c.content = true
		return true
	}
	c.pend = append(c.pend[:0], part[len(part)-keep:]...)
	return false
}

// incompleteRuneTail returns how many trailing bytes of b start a UTF-8
// rune that continues past b.
func incompleteRuneTail(b []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
