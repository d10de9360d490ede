package kafka

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/doris-sink/doris-sink/loader/kafka/cdcschema"
)

// schemaTracker notices when the Connect schema block of debezium records
// changes. The steady state is one bytes.Equal per record, no allocation:
// a copy is made only when the block differs from the last one.
type schemaTracker struct {
	last    []byte // the last schema block seen (a copy)
	changed bool   // the current record's block differs from the one before
}

// see records the current record's schema block (nil: none).
func (t *schemaTracker) see(block []byte) {
	if bytes.Equal(block, t.last) {
		t.changed = false
		return
	}
	t.last = append(t.last[:0], block...)
	t.changed = len(block) > 0
}

// TrackSchemas makes a debezium Converter notice changes of the records'
// Connect schema block (SchemaChanged).
func (c *Converter) TrackSchemas() {
	if c.format == FormatDebezium && c.schemas == nil {
		c.schemas = &schemaTracker{}
	}
}

// SchemaChanged reports whether the last converted record carried a
// Connect schema block different from the record before it, and returns
// that block (valid until the next change).
func (c *Converter) SchemaChanged() ([]byte, bool) {
	if c.schemas == nil || !c.schemas.changed {
		return nil, false
	}
	return c.schemas.last, true
}

// forgetSchema makes the next record's schema block count as changed
// (after a schema evolution that failed, so that it is looked at again).
func (c *Converter) forgetSchema() {
	if c.schemas != nil {
		c.schemas.last = nil
	}
}

// HasUnknownFields reports whether the last converted row had a top-level
// field that is not a known column (WatchFields must be on).
func (c *Converter) HasUnknownFields() bool { return c.watch != nil && c.watch.rowUnknown }

// KnowFields adds names to the known columns of the field watch (after a
// schema evolution added them).
func (c *Converter) KnowFields(names []string) {
	if c.watch == nil {
		return
	}
	for _, n := range names {
		c.watch.known[n] = struct{}{}
	}
	clear(c.watch.prevOK) // positions may now hold other names
}

// unknownFields returns the fields of the JSON object row that are not
// known columns and have a non-null value, with a Connect type inferred from
// the value (the schema-less path of schema evolution): a string is
// "string", true/false "boolean", an integer "int64", another number
// "float64", an object or array a JSON document (io.debezium.data.Json).
// Called only when HasUnknownFields is true.
func (c *Converter) unknownFields(row []byte) ([]cdcschema.Field, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(row, &obj); err != nil {
		return nil, fmt.Errorf("read the row's fields: %w", err)
	}
	var out []cdcschema.Field
	for name, raw := range obj {
		if _, ok := c.watch.known[name]; ok {
			continue
		}
		if f, ok := inferField(name, raw); ok {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// inferField maps a JSON value to a Connect field; null says nothing (the
// column is added when a value comes).
func inferField(name string, raw json.RawMessage) (cdcschema.Field, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return cdcschema.Field{}, false
	}
	f := cdcschema.Field{Name: name, Optional: true}
	switch raw[0] {
	case '"':
		f.Type = "string"
	case 't', 'f':
		f.Type = "boolean"
	case '{', '[':
		f.Type, f.Semantic = "string", cdcschema.DebeziumJSON
	default:
		if bytes.ContainsAny(raw, ".eE") {
			f.Type = "float64"
		} else {
			f.Type = "int64"
		}
	}
	return f, true
}
