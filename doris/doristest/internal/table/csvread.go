package table

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxRecordBytes bounds one CSV record / JSON line held in memory.
const maxRecordBytes = 64 << 20

// csvOpts are the CSV knobs of a LoadSpec in byte form.
type csvOpts struct {
	sep, delim       string
	enclose, escape  byte
	hasEnc, hasEsc   bool
	trimDoubleQuotes bool
}

func newCSVOpts(s LoadSpec) csvOpts {
	o := csvOpts{sep: s.ColumnSeparator, delim: s.LineDelimiter, trimDoubleQuotes: s.TrimDoubleQuotes}
	if o.sep == "" {
		o.sep = "\t"
	}
	if o.delim == "" {
		o.delim = "\n"
	}
	if s.Enclose != "" {
		o.enclose, o.hasEnc = s.Enclose[0], true
	}
	if s.Escape != "" {
		o.escape, o.hasEsc = s.Escape[0], true
	}
	return o
}

// newRecordScanner splits r into records at the line delimiter (multi-byte
// allowed); with enclose set, delimiters inside an enclosed field do not
// split. It streams: memory is bounded by the longest record.
func newRecordScanner(r io.Reader, o csvOpts) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxRecordBytes)
	delim := []byte(o.delim)
	sep := []byte(o.sep)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if atEOF && len(data) == 0 {
			return 0, nil, nil
		}
		if !o.hasEnc {
			if i := bytes.Index(data, delim); i >= 0 {
				return i + len(delim), data[:i], nil
			}
		} else {
			inQ := false
			for i := 0; i < len(data); i++ {
				c := data[i]
				if inQ {
					if o.hasEsc && c == o.escape && c != o.enclose {
						i++
						continue
					}
					if c == o.enclose {
						inQ = false
					}
					continue
				}
				if c == o.enclose && (i == 0 || bytes.HasSuffix(data[:i], sep)) {
					inQ = true
					continue
				}
				if bytes.HasPrefix(data[i:], delim) {
					return i + len(delim), data[:i], nil
				}
			}
		}
		if atEOF {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	return sc
}

// splitFields splits one record into fields: nil for `\N`, else the text.
func splitFields(rec string, o csvOpts, out []any) []any {
	out = out[:0]
	if !o.hasEnc {
		for {
			i := strings.Index(rec, o.sep)
			f := rec
			if i >= 0 {
				f = rec[:i]
			}
			out = append(out, plainField(f, o))
			if i < 0 {
				return out
			}
			rec = rec[i+len(o.sep):]
		}
	}
	for {
		if len(rec) > 0 && rec[0] == o.enclose {
			var sb strings.Builder
			j := 1
			for j < len(rec) {
				c := rec[j]
				if o.hasEsc && c == o.escape && c != o.enclose && j+1 < len(rec) {
					sb.WriteByte(rec[j+1])
					j += 2
					continue
				}
				if c == o.enclose {
					j++
					break
				}
				sb.WriteByte(c)
				j++
			}
			rest := rec[j:]
			i := strings.Index(rest, o.sep)
			if i < 0 {
				sb.WriteString(rest)
				return append(out, sb.String())
			}
			sb.WriteString(rest[:i])
			out = append(out, sb.String())
			rec = rest[i+len(o.sep):]
			continue
		}
		i := strings.Index(rec, o.sep)
		if i < 0 {
			return append(out, plainField(rec, o))
		}
		out = append(out, plainField(rec[:i], o))
		rec = rec[i+len(o.sep):]
	}
}

func plainField(f string, o csvOpts) any {
	if f == `\N` {
		return nil
	}
	if o.trimDoubleQuotes && len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		return f[1 : len(f)-1]
	}
	return f
}

// csvSkip is the number of leading lines a CSV load skips: csv_with_names
// and csv_with_names_and_types skip their header line(s), otherwise
// skip_lines (docs/doris-facts.md §1.4).
func csvSkip(s LoadSpec) int {
	switch s.Format {
	case FormatCSVWithNames:
		return 1
	case FormatCSVWithNamesAndTypes:
		return 2
	}
	return s.SkipLines
}

func scanError(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return &Error{Code: "INTERNAL_ERROR", Msg: fmt.Sprintf("a record exceeds %d bytes: not emulated by doristest", maxRecordBytes)}
	}
	return &Error{Code: "INTERNAL_ERROR", Msg: "read body: " + err.Error()}
}

// readCSV parses a CSV body. Empty lines are skipped (Doris's default
// read_csv_empty_line_as_null=false); a wrong field count filters the row.
func (p *loadPlan) readCSV(r io.Reader, b *Batch) error {
	o := newCSVOpts(p.spec)
	sc := newRecordScanner(r, o)
	skip := csvSkip(p.spec)
	var fields []any
	for sc.Scan() {
		rec := sc.Bytes()
		if skip > 0 {
			skip--
			continue
		}
		if len(rec) == 0 {
			continue
		}
		line := string(rec)
		fields = splitFields(line, o, fields)
		lineFn := func() string { return line }
		if len(fields) != len(p.srcNames) {
			b.TotalRows++
			rel := "less"
			if len(fields) > len(p.srcNames) {
				rel = "more"
			}
			b.filter(fmt.Sprintf("actual column number in csv file is %s than schema column number.actual number: %d, schema column number: %d; line delimiter: [%s], column separator: [%s]",
				rel, len(fields), len(p.srcNames), quoteSep(o.delim), quoteSep(o.sep)), lineFn)
			continue
		}
		src := make([]any, len(fields))
		copy(src, fields)
		p.process(b, src, lineFn)
	}
	if err := sc.Err(); err != nil {
		return scanError(err)
	}
	return nil
}
