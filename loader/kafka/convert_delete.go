package kafka

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka/internal/jsontext"
)

// DeleteConfig makes FormatJSON records delete rows of a Unique Key table
// without Debezium, like the Doris Kafka connector's enable.delete: every
// row gets __DORIS_DELETE_SIGN__ (1 for a delete, 0 otherwise) and the
// loader's properties must include hidden_columns: __DORIS_DELETE_SIGN__
// (DeleteProperties). A row with the sign 1 removes its key (docs/doris-facts.md
// §7). The zero value deletes nothing.
type DeleteConfig struct {
	// Field is a top-level field of the record whose value Value marks a
	// delete (records.delete.field). The field is loaded like any other
	// (Doris ignores it when the table has no such column).
	Field string
	// Value is compared with Field's value: the text of a JSON string, or
	// the literal of a number, true or false ("1", "true"); null never
	// matches (records.delete.value).
	Value string
	// Tombstones turns a record with a null value and a key into a delete
	// of that key (records.delete.tombstones). The key must be a JSON
	// object carrying the table's key columns, bare or in the JSON
	// converter's {"schema":…,"payload":{…}} envelope. A tombstone without
	// a key, or whose key is not such an object, is a conversion error
	// (dead letter or failed checkpoint).
	Tombstones bool
}

// Enabled reports whether rows carry the delete sign.
func (d DeleteConfig) Enabled() bool { return d.Field != "" || d.Tombstones }

func (d DeleteConfig) validate(format string) error {
	if !d.Enabled() {
		return nil
	}
	if format != FormatJSON {
		return fmt.Errorf("records.delete.*: only with records.format json (debezium applies op=d itself; csv rows carry no field names), not %s", format)
	}
	if (d.Field == "") != (d.Value == "") {
		return errors.New("records.delete.field and records.delete.value go together")
	}
	return nil
}

// DeleteProperties returns the Stream Load properties rows converted with d
// need: hidden_columns: __DORIS_DELETE_SIGN__ when d is enabled, nothing
// otherwise. Merge them into loader.Config.Properties.
func DeleteProperties(d DeleteConfig) map[string]string {
	if d.Enabled() {
		return map[string]string{"hidden_columns": DeleteSignColumn}
	}
	return nil
}

// deleteSignKey is the delete sign as a JSON key.
var deleteSignKey = []byte(`"` + DeleteSignColumn + `"`)

// delMatch reports whether the compact, valid JSON object obj marks a
// delete: its top-level c.del.Field has the value c.del.Value. A record that
// carries __DORIS_DELETE_SIGN__ itself is refused: the sign would be given
// twice.
func (c *Converter) delMatch(obj []byte) (bool, error) {
	if c.del.Field == "" && !bytes.Contains(obj, deleteSignKey) {
		return false, nil // tombstones only, and no sign in the record: nothing to scan
	}
	match := false
	i := 1 // after '{'
	for i < len(obj) && obj[i] != '}' {
		// obj is compact and valid: jsonscan's word-at-a-time scanner
		// finds the ends (skipString goes byte by byte).
		kEnd, _ := jsontext.ScanString(obj, i)
		key := obj[i+1 : kEnd-1]
		vEnd, ok := scanValue(obj, kEnd+1, 1)
		if !ok {
			return false, errors.New("invalid JSON") // unreachable on compacted input
		}
		val := obj[kEnd+1 : vEnd]
		switch {
		case keyIs(key, DeleteSignColumn):
			return false, fmt.Errorf("the record carries %s itself; with records.delete.* doris-sink sets it (remove the field, or drop records.delete.* and set hidden_columns)", DeleteSignColumn)
		case c.del.Field != "" && keyIs(key, c.del.Field):
			match = valueIs(val, c.del.Value) // later duplicates win, as in encoding/json
		}
		i = vEnd
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	return match, nil
}

// keyIs compares a raw JSON key (without quotes) with name, allocating only
// for escaped keys.
func keyIs(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name // no allocation
	}
	var s string
	_ = json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s)
	return s == name
}

// valueIs compares a raw JSON value with want: a string's text, or the
// literal of another scalar.
func valueIs(raw []byte, want string) bool {
	if len(raw) >= 2 && raw[0] == '"' {
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1:len(raw)-1]) == want
		}
		var s string
		_ = json.Unmarshal(raw, &s)
		return s == want
	}
	if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' || raw[0] == 'n' {
		return false
	}
	return string(raw) == want
}

// convertTombstone turns a null-value record into a delete of its key:
// the key object (or the payload of its schema envelope) with
// __DORIS_DELETE_SIGN__ 1.
func (c *Converter) convertTombstone(r *kgo.Record) ([]byte, error) {
	if len(r.Key) == 0 {
		return nil, errors.New("tombstone (null value) without a key: nothing to delete (records.delete.tombstones needs a JSON key carrying the key columns)")
	}
	if err := c.compactObject(r.Key); err != nil {
		return nil, fmt.Errorf("tombstone key: %w (records.delete.tombstones needs a JSON object carrying the key columns)", err)
	}
	if env, err := scanEnvelope(c.buf.Bytes()); err == nil && env.payload != nil && len(env.payload) > 0 && env.payload[0] == '{' && schemaEnvelope(c.buf.Bytes()) {
		p := bytes.Clone(env.payload) // rare: the JSON converter with schemas on
		c.buf.Reset()
		c.buf.Write(p)
	}
	if bytes.Equal(c.buf.Bytes(), []byte("{}")) {
		return nil, errors.New("tombstone key is an empty object: no key columns to delete")
	}
	if _, err := c.delMatch(c.buf.Bytes()); err != nil {
		return nil, fmt.Errorf("tombstone key: %w", err)
	}
	c.field(deleteSignOn[:len(deleteSignOn)-1], deleteSignOn[len(deleteSignOn)-1:])
	c.appendMetadata(r)
	return c.buf.Bytes(), nil
}

// schemaEnvelope reports whether the compact object obj has exactly the
// keys schema and payload (Kafka Connect's JSON converter with schemas).
func schemaEnvelope(obj []byte) bool {
	n, schema, payload := 0, false, false
	i := 1
	for i < len(obj) && obj[i] != '}' {
		kEnd := skipString(obj, i)
		key := obj[i+1 : kEnd-1]
		n++
		schema = schema || keyIs(key, "schema")
		payload = payload || keyIs(key, "payload")
		i = skipValue(obj, kEnd+1)
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	return n == 2 && schema && payload
}
