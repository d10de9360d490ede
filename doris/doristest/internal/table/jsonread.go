package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// pathStep is one step of a JSON path: a key or an array index.
type pathStep struct {
	key   string
	idx   int
	isIdx bool
}

// parseJSONPath parses the jsonpaths / json_root subset: $, $.a.b, $.a[0],
// $['a'], $["a"].
func parseJSONPath(s string) ([]pathStep, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("Invalid json path: %s", s)
	}
	var out []pathStep
	rest := s[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			i := strings.IndexAny(rest, ".[")
			if i < 0 {
				i = len(rest)
			}
			if i == 0 {
				return nil, fmt.Errorf("Invalid json path: %s", s)
			}
			out = append(out, pathStep{key: rest[:i]})
			rest = rest[i:]
		case '[':
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				return nil, fmt.Errorf("Invalid json path: %s", s)
			}
			in := strings.TrimSpace(rest[1:j])
			rest = rest[j+1:]
			if len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0] {
				out = append(out, pathStep{key: in[1 : len(in)-1]})
				continue
			}
			n, err := strconv.Atoi(in)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("Invalid json path: %s", s)
			}
			out = append(out, pathStep{idx: n, isIdx: true})
		default:
			return nil, fmt.Errorf("Invalid json path: %s", s)
		}
	}
	return out, nil
}

// navigate follows path in doc; ok is false when a step is missing.
func navigate(doc json.RawMessage, path []pathStep) (json.RawMessage, bool) {
	for _, st := range path {
		if st.isIdx {
			var arr []json.RawMessage
			if json.Unmarshal(doc, &arr) != nil || st.idx >= len(arr) {
				return nil, false
			}
			doc = arr[st.idx]
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(doc, &obj) != nil {
			return nil, false
		}
		v, ok := obj[st.key]
		if !ok {
			return nil, false
		}
		doc = v
	}
	return doc, true
}

// jsonReader holds the parsed jsonpaths / json_root of one load.
type jsonReader struct {
	p     *loadPlan
	paths [][]pathStep
	root  []pathStep
}

func newJSONReader(p *loadPlan) (*jsonReader, error) {
	jr := &jsonReader{p: p}
	if p.spec.JSONPaths != "" {
		var ps []string
		if err := json.Unmarshal([]byte(p.spec.JSONPaths), &ps); err != nil {
			return nil, dataQuality("Invalid json path: %s", p.spec.JSONPaths)
		}
		for _, s := range ps {
			st, err := parseJSONPath(s)
			if err != nil {
				return nil, dataQuality("%v", err)
			}
			jr.paths = append(jr.paths, st)
		}
	}
	if p.spec.JSONRoot != "" {
		st, err := parseJSONPath(p.spec.JSONRoot)
		if err != nil {
			return nil, dataQuality("%v", err)
		}
		jr.root = st
	}
	return jr, nil
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// readJSON parses a JSON body (docs/doris-facts.md §1.4 read_json_by_line,
// strip_outer_array, jsonpaths, json_root). A malformed line filters that
// line; a malformed whole-body document fails the load.
func (p *loadPlan) readJSON(r io.Reader, b *Batch) error {
	jr, err := newJSONReader(p)
	if err != nil {
		return err
	}
	switch {
	case p.spec.ReadJSONByLine:
		sc := newRecordScanner(r, csvOpts{delim: p.spec.LineDelimiter, sep: "\t"})
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			doc := append(json.RawMessage(nil), line...)
			if !json.Valid(doc) {
				b.TotalRows++
				b.filter("Parse json data for JsonDoc failed. code: 3, error info: Invalid value.", func() string { return string(doc) })
				continue
			}
			jr.doc(b, doc)
		}
		if err := sc.Err(); err != nil {
			return scanError(err)
		}
		return nil
	case p.spec.StripOuterArray && jr.root == nil:
		// Stream the outer array element by element.
		dec := json.NewDecoder(r)
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return parseFailed(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			b.TotalRows++
			b.filter("JSON data is not an array-object, `strip_outer_array` must be FALSE.", func() string { return fmt.Sprint(tok) })
			return nil
		}
		for dec.More() {
			var el json.RawMessage
			if err := dec.Decode(&el); err != nil {
				return parseFailed(err)
			}
			jr.object(b, el)
		}
		if _, err := dec.Token(); err != nil {
			return parseFailed(err)
		}
		return trailing(dec)
	default:
		dec := json.NewDecoder(r)
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if err == io.EOF {
				return nil
			}
			return parseFailed(err)
		}
		if err := trailing(dec); err != nil {
			return err
		}
		jr.doc(b, doc)
		return nil
	}
}

func parseFailed(err error) error {
	return dataQuality("Parse json data for JsonDoc failed. error info: %v", err)
}

func trailing(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return dataQuality("Parse json data for JsonDoc failed. error info: The document root must not be followed by other values.")
	}
	return nil
}

// doc handles one JSON document: json_root, then an object (one row) or,
// with strip_outer_array, an array of objects.
func (jr *jsonReader) doc(b *Batch, doc json.RawMessage) {
	line := func() string { return string(doc) }
	if jr.root != nil {
		v, ok := navigate(doc, jr.root)
		if !ok {
			b.TotalRows++
			b.filter("JSON Root not found.", line)
			return
		}
		doc = v
	}
	switch firstByte(doc) {
	case '[':
		if !jr.p.spec.StripOuterArray {
			b.TotalRows++
			b.filter("JSON data is array-object, `strip_outer_array` must be TRUE.", line)
			return
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(doc, &arr); err != nil {
			b.TotalRows++
			b.filter("Parse json data for JsonDoc failed. error info: "+err.Error(), line)
			return
		}
		for _, el := range arr {
			jr.object(b, el)
		}
	case '{':
		if jr.p.spec.StripOuterArray {
			b.TotalRows++
			b.filter("JSON data is not an array-object, `strip_outer_array` must be FALSE.", line)
			return
		}
		jr.object(b, doc)
	default:
		b.TotalRows++
		b.filter("Expect json object value", line)
	}
}

// object turns one JSON object into source values: by jsonpaths in order,
// else by key (exact, then case-insensitive).
func (jr *jsonReader) object(b *Batch, obj json.RawMessage) {
	p := jr.p
	line := func() string { return string(obj) }
	src := make([]any, len(p.srcNames))
	found := 0
	if jr.paths != nil {
		for i, path := range jr.paths {
			if i >= len(src) {
				break
			}
			if v, ok := navigate(obj, path); ok {
				src[i] = jsonRaw(v)
				found++
			}
		}
	} else {
		if firstByte(obj) != '{' {
			b.TotalRows++
			b.filter("Expect json object value", line)
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(obj, &m); err != nil {
			b.TotalRows++
			b.filter("Parse json data for JsonDoc failed. error info: "+err.Error(), line)
			return
		}
		for i, name := range p.srcNames {
			v, ok := m[name]
			if !ok {
				for k, kv := range m {
					if strings.EqualFold(k, name) {
						v, ok = kv, true
						break
					}
				}
			}
			if ok {
				src[i] = jsonRaw(v)
				found++
			}
		}
	}
	if found == 0 {
		b.TotalRows++
		b.filter("All fields is null, this is a invalid row.", line)
		return
	}
	p.process(b, src, line)
}
