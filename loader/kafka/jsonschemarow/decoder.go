package jsonschemarow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Options configures a Decoder.
type Options struct {
	// TimeZone is the zone strings of `"format": "date-time"` properties are
	// rendered in, as Doris DATETIME(6) text. nil: UTC.
	TimeZone *time.Location
	// Validate checks each record against the schema, as the Confluent
	// deserializer does with json.fail.invalid.schema=true (default there:
	// false, and here: off). A record that does not match is an error.
	Validate bool
	// KeepDateTime passes date-time strings through unchanged (for STRING
	// columns) instead of rewriting them to DATETIME(6) text.
	KeepDateTime bool
	// MaxRowBytes bounds one row's JSON: a record whose row would pass it
	// is a *DecodeError wrapping ErrRowTooBig (0: DefaultMaxRowBytes).
	MaxRowBytes int
}

// DefaultMaxRowBytes bounds one row's JSON (Options.MaxRowBytes): 100
// MiB, the BE's streaming_load_json_max_mb, the largest JSON document
// Doris parses in one piece.
const DefaultMaxRowBytes = 100 << 20

// ErrRowTooBig is wrapped by a DecodeError when the row's JSON would pass
// Options.MaxRowBytes.
var ErrRowTooBig = errors.New("row too big")

// Decoder turns JSON Schema record payloads of one registry schema into
// JSON rows. It is immutable after New and safe for concurrent use.
type Decoder struct {
	schema *jsonschema.Schema // compiled only with Options.Validate
	// dt is where the schema declares date-time strings; nil: nowhere, and a
	// record is only checked and compacted.
	dt     *node
	tz     *time.Location
	maxRow int
}

// New compiles a registry schema (the JSON Schema text; draft-07 unless its
// $schema says otherwise, Confluent's default). refs maps each reference
// name (the registry's references[].name, the URL or relative name a $ref
// uses) to its schema text, resolved transitively by the caller.
func New(schema string, refs map[string]string, opt Options) (*Decoder, error) {
	docs, err := parseDocs(schema, refs)
	if err != nil {
		return nil, err
	}
	d := &Decoder{tz: opt.TimeZone, maxRow: opt.MaxRowBytes}
	if d.maxRow <= 0 {
		d.maxRow = DefaultMaxRowBytes
	}
	if d.tz == nil {
		d.tz = time.UTC
	}
	if opt.Validate {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft7)
		c.UseLoader(docs)
		if d.schema, err = c.Compile(mainURL); err != nil {
			return nil, fmt.Errorf("compile JSON schema: %w", err)
		}
	}
	if !opt.KeepDateTime {
		if d.dt, err = dateTimePlan(docs); err != nil {
			return nil, fmt.Errorf("JSON schema: %w", err)
		}
	}
	return d, nil
}

// AppendJSON decodes one record payload, the JSON document after the 5-byte
// Confluent header (magic 0, big-endian schema id; JSON Schema payloads
// carry no message index), and appends it as one compact JSON object (one
// Doris row, no newline) to dst. A payload that is not one JSON object, or
// (with Options.Validate) does not match the schema, is a *DecodeError; dst
// is then returned unchanged. A row whose JSON passes Options.MaxRowBytes
// is a *DecodeError wrapping ErrRowTooBig; nesting deeper than 10000 is
// invalid JSON (encoding/json's bound).
func (d *Decoder) AppendJSON(dst, payload []byte) ([]byte, error) {
	out, err := d.appendJSON(dst, payload)
	if err == nil && len(out)-len(dst) > d.maxRow {
		return dst, &DecodeError{Offset: 0, Reason: fmt.Sprintf("the row's JSON is %d bytes", len(out)-len(dst)), Err: ErrRowTooBig}
	}
	return out, err
}

func (d *Decoder) appendJSON(dst, payload []byte) ([]byte, error) {
	i := skipSpace(payload, 0)
	if i == len(payload) {
		return dst, &DecodeError{Offset: 0, Reason: "empty payload, want a JSON object"}
	}
	if payload[i] != '{' {
		if _, ok := compactValid(nil, payload, false); !ok {
			return dst, invalidJSON(payload)
		}
		return dst, &DecodeError{Offset: i, Reason: fmt.Sprintf("payload is a JSON %s, want an object", kindOf(payload[i]))}
	}
	// Check and compact in one pass; with date-time rewriting, only check.
	out, ok := compactValid(dst, payload, d.dt == nil)
	if !ok {
		return dst, invalidJSON(payload)
	}
	if d.schema != nil {
		if deeper(payload, MaxValidateDepth) {
			return dst, &DecodeError{Offset: 0, Reason: fmt.Sprintf("nested deeper than %d objects and arrays, the bound of a validated record", MaxValidateDepth)}
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
		if err != nil {
			return dst, &DecodeError{Offset: 0, Reason: "invalid JSON", Err: err}
		}
		if err := d.schema.Validate(v); err != nil {
			return dst, &DecodeError{Offset: 0, Reason: "record does not match the schema", Err: err}
		}
	}
	if d.dt == nil {
		return out, nil
	}
	w := rewriter{src: payload, i: i, tz: d.tz}
	out, err := w.value(dst, d.dt)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// MaxValidateDepth bounds the nesting of a record checked against its
// schema (Options.Validate): the validator recurses with deep frames, and
// 10,000 levels of a recursive schema took 64 MiB of stack and 0.7 s for
// one 50 KB record; 1000 take a tenth of that.
const MaxValidateDepth = 1000

// deeper reports whether the valid JSON b nests more than max objects
// and arrays.
func deeper(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// DecodeError is a payload that is not a row.
type DecodeError struct {
	// Offset is the byte offset in the payload where the problem is (0 when
	// it concerns the whole record).
	Offset int
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error: a *jsonschema.ValidationError naming the
	// instance location and schema keyword, or a JSON syntax error.
	Err error
}

// Error says where and what, and the underlying error.
func (e *DecodeError) Error() string {
	msg := fmt.Sprintf("JSON Schema payload at byte %d: %s", e.Offset, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// invalidJSON explains a payload json.Valid refused, with the offset the
// standard decoder reports.
func invalidJSON(payload []byte) error {
	var v any
	err := json.Unmarshal(payload, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, the offending one included.
		return &DecodeError{Offset: max(int(se.Offset)-1, 0), Reason: "invalid JSON", Err: err}
	}
	return &DecodeError{Offset: 0, Reason: "invalid JSON", Err: err}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func kindOf(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
