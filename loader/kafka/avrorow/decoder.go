package avrorow

import (
	"errors"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
)

// Options configure a Decoder.
type Options struct {
	// TimeZone renders timestamp-millis and timestamp-micros (instants)
	// as wall-clock DATETIME text in this zone. nil means UTC. The
	// local-timestamp types are wall-clock times already and are not
	// converted.
	TimeZone *time.Location
}

// Decoder turns Avro binary payloads written with one schema into JSON
// objects. It is immutable after New and safe for concurrent use.
type Decoder struct {
	root *node
	loc  *time.Location
	utc  bool
}

// New compiles an Avro schema (its JSON text as the registry stores it).
// refs maps each reference name (the full name of a named type another
// subject defines) to that schema's text; they are parsed first, in an
// order that satisfies their own references. The top-level schema must be
// a record: it becomes the row, its fields the columns.
func New(schema string, refs map[string]string, opt Options) (*Decoder, error) {
	cache := &avro.SchemaCache{} // per decoder: never the hamba global cache
	if err := parseRefs(refs, cache); err != nil {
		return nil, err
	}
	s, err := avro.ParseWithCache(schema, "", cache)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	c := compiler{named: map[string]*node{}}
	root, err := c.compile(s)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	if root.kind != kRecord {
		return nil, fmt.Errorf("avro schema: the top-level type is %s; a Doris row needs a record (its fields are the columns)", s.Type())
	}
	loc := opt.TimeZone
	if loc == nil {
		loc = time.UTC
	}
	return &Decoder{root: root, loc: loc, utc: loc == time.UTC}, nil
}

// parseRefs parses the referenced schemas into cache. A reference may
// itself reference another, so the ones that fail are retried while the
// others make progress.
func parseRefs(refs map[string]string, cache *avro.SchemaCache) error {
	left := make(map[string]string, len(refs))
	for k, v := range refs {
		left[k] = v
	}
	for len(left) > 0 {
		var errs []error
		progress := false
		for name, text := range left {
			if _, err := avro.ParseWithCache(text, "", cache); err != nil {
				errs = append(errs, fmt.Errorf("reference %q: %w", name, err))
				continue
			}
			delete(left, name)
			progress = true
		}
		if !progress {
			return fmt.Errorf("avro schema references: %w", errors.Join(errs...))
		}
	}
	return nil
}

// AppendJSON decodes one payload (the Avro binary encoding of a record of
// the Decoder's schema, without the 5-byte wire-format header) and appends
// it to dst as one compact JSON object. On error dst is returned as it
// was given (its length), and the *DecodeError names the field path and
// the byte offset in payload.
func (d *Decoder) AppendJSON(dst, payload []byte) ([]byte, error) {
	r := reader{b: payload}
	n := len(dst)
	out, err := d.value(dst, &r, d.root)
	if err != nil {
		return dst[:n], err
	}
	if r.pos != len(payload) {
		return dst[:n], &DecodeError{Offset: r.pos, Err: fmt.Errorf("%d trailing bytes after the record (a payload of another schema?)", len(payload)-r.pos)}
	}
	return out, nil
}
