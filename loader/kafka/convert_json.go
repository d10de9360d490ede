package kafka

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// convertJSON validates that r.Value is one JSON object and re-emits it
// compactly (one line) into c.buf, with the metadata columns.
func (c *Converter) convertJSON(r *kgo.Record) ([]byte, error) {
	if r.Value == nil {
		if c.del.Tombstones {
			return c.convertTombstone(r)
		}
		return nil, errors.New("null value (tombstone): a json record must hold one JSON object")
	}
	if !c.meta.any() && !c.del.Enabled() && isCompactObject(r.Value) {
		return r.Value, nil // already one compact object: the row is the value, no copy
	}
	if err := c.compactObject(r.Value); err != nil {
		return nil, err
	}
	if c.del.Enabled() {
		del, err := c.delMatch(c.buf.Bytes())
		if err != nil {
			return nil, err
		}
		sign := deleteSignOff
		if del {
			sign = deleteSignOn
		}
		c.field(sign[:len(sign)-1], sign[len(sign)-1:])
	}
	c.appendMetadata(r)
	return c.buf.Bytes(), nil
}

// compactObject resets c.buf to the compact form of v, which must be one
// JSON object. json.Compact reuses a pooled scanner and c.buf's memory, so
// the steady state allocates nothing.
func (c *Converter) compactObject(v []byte) error {
	i := skipSpace(v, 0)
	if i == len(v) {
		return errors.New("empty value: want a JSON object")
	}
	if v[i] != '{' {
		return notObject(v, i)
	}
	c.buf.Reset()
	if isCompactObject(v) { // the fast path: nothing to compact
		c.buf.Write(v)
		return nil
	}
	if err := json.Compact(&c.buf, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

// notObject explains why v (first non-blank byte at i) is not an object.
func notObject(v []byte, i int) error {
	if !json.Valid(v) {
		return fmt.Errorf("invalid JSON starting with %q: want a JSON object", v[i])
	}
	return fmt.Errorf("value is a JSON %s, want an object", kindOf(v[i]))
}

func kindOf(b byte) string {
	switch b {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "number"
	}
	return fmt.Sprintf("value starting with %q", b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
