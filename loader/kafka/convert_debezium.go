package kafka

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	deleteSignOn  = []byte(`"` + DeleteSignColumn + `":1`)
	deleteSignOff = []byte(`"` + DeleteSignColumn + `":0`)
)

// envelope holds the raw top-level values of a Debezium change event.
type envelope struct {
	op, before, after, payload, schema []byte
}

// convertDebezium loads the image the operation leaves: c (create), u
// (update), r (snapshot read) → "after" with __DORIS_DELETE_SIGN__ 0;
// d (delete) → "before" with __DORIS_DELETE_SIGN__ 1. The envelope may be
// wrapped in {"schema":…,"payload":{…}} (the JSON converter with schemas
// enabled). Other ops (t truncate, m message) are refused.
func (c *Converter) convertDebezium(r *kgo.Record) ([]byte, error) {
	if r.Value == nil {
		return nil, ErrTombstone
	}
	v := r.Value
	// isCompactObject validates compact JSON (Debezium's JSON converter
	// writes it) word-at-a-time; encoding/json decides the rest.
	if !isCompactObject(v) && !json.Valid(v) {
		return nil, fmt.Errorf("invalid JSON: %w", syntaxError(v))
	}
	return c.debeziumRow(r, v)
}

// debeziumRow loads the image of the valid JSON change event v (the
// value of r, or its decoded registry form).
func (c *Converter) debeziumRow(r *kgo.Record, v []byte) ([]byte, error) {
	env, err := scanEnvelope(v)
	if err != nil {
		return nil, err
	}
	if c.schemas != nil {
		c.schemas.see(env.schema)
	}
	if env.op == nil && env.payload != nil {
		if env, err = scanEnvelope(env.payload); err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
	}
	var image, sign []byte
	var which string
	switch op := opCode(env.op); op {
	case "c", "u", "r":
		image, sign, which = env.after, deleteSignOff, "after"
	case "d":
		image, sign, which = env.before, deleteSignOn, "before"
	case "":
		return nil, errors.New(`not a Debezium envelope: no "op" string field (nor in "payload")`)
	default:
		return nil, fmt.Errorf("op %q is not supported (want c, u, r or d)", op)
	}
	if image == nil || bytes.Equal(image, []byte("null")) {
		return nil, fmt.Errorf("op %s without a %q image", opCode(env.op), which)
	}
	if err := c.compactObject(image); err != nil {
		return nil, fmt.Errorf("%q image: %w", which, err)
	}
	if c.vals != nil {
		c.convertValues()
	}
	c.field(sign[:len(sign)-1], sign[len(sign)-1:])
	c.appendMetadata(r)
	return c.buf.Bytes(), nil
}

// syntaxError returns encoding/json's description of why v is invalid (the
// error path only).
func syntaxError(v []byte) error {
	var x any
	return json.Unmarshal(v, &x)
}

// opCode returns the op string of the raw JSON value, "" when it is not a
// string.
func opCode(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]) // 1-byte ops: no allocation
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// scanEnvelope returns the raw values of the top-level keys op, before,
// after and payload of v, which must be valid JSON. Later duplicates win,
// as in encoding/json.
func scanEnvelope(v []byte) (envelope, error) {
	var env envelope
	i := skipSpace(v, 0)
	if i == len(v) || v[i] != '{' {
		if i == len(v) {
			return env, errors.New("empty value: want a JSON object")
		}
		return env, notObject(v, i)
	}
	i = skipSpace(v, i+1)
	for i < len(v) && v[i] != '}' {
		kEnd := skipString(v, i)
		key := v[i+1 : kEnd-1]
		i = skipSpace(v, kEnd) // at ':'
		i = skipSpace(v, i+1)
		vEnd := skipValue(v, i)
		val := v[i:vEnd]
		switch keyName(key) {
		case "op":
			env.op = val
		case "before":
			env.before = val
		case "after":
			env.after = val
		case "payload":
			env.payload = val
		case "schema":
			env.schema = val
		}
		i = skipSpace(v, vEnd)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return env, nil
}

// keyName returns the envelope key name of a raw key, without allocating
// for the plain keys it looks for.
func keyName(raw []byte) string {
	if bytes.IndexByte(raw, '\\') >= 0 {
		var s string
		_ = json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s)
		return s
	}
	switch string(raw) { // the compiler does not allocate for this switch
	case "op":
		return "op"
	case "before":
		return "before"
	case "after":
		return "after"
	case "payload":
		return "payload"
	case "schema":
		return "schema"
	}
	return ""
}

// skipString returns the index after the JSON string starting at v[i]
// (valid JSON assumed).
func skipString(v []byte, i int) int {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// skipValue returns the index after the JSON value starting at v[i]
// (valid JSON assumed).
func skipValue(v []byte, i int) int {
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				j = skipString(v, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(v)
	}
	j := i
	for j < len(v) && v[j] != ',' && v[j] != '}' && v[j] != ']' && v[j] != ' ' && v[j] != '\t' && v[j] != '\n' && v[j] != '\r' {
		j++
	}
	return j
}
