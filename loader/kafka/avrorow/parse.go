package avrorow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Schema is a parsed Avro schema: the compiled tree the decoder walks,
// also used to check whether one schema can read data written with
// another (CanRead). It is immutable and safe for concurrent use.
type Schema struct {
	root *node
}

// Parse parses an Avro schema (its JSON text, as a registry stores it).
// refs maps each reference name (the full name of a named type another
// subject defines) to that schema's text; they are parsed first, in an
// order that satisfies their own references. Parsing follows the Avro
// specification's rules for names and namespaces; a logical type on the
// wrong base type, or with invalid parameters, is ignored as the
// specification says (the value reads as its base type).
func Parse(schema string, refs map[string]string) (*Schema, error) {
	p := &parser{named: map[string]*node{}}
	if err := p.refs(refs); err != nil {
		return nil, err
	}
	n, err := p.text(schema)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	return &Schema{root: n}, nil
}

// parser turns schema JSON into nodes. Named types (record, enum, fixed)
// are registered by full name before their fields are parsed, so a
// record may hold itself.
type parser struct {
	named map[string]*node
	// added lists the names registered by the text being parsed, to undo
	// them when it fails (refs are retried).
	added []string
}

func (p *parser) refs(refs map[string]string) error {
	left := make(map[string]string, len(refs))
	for k, v := range refs {
		left[k] = v
	}
	for len(left) > 0 {
		var errs []error
		progress := false
		for name, text := range left {
			p.added = p.added[:0]
			if _, err := p.text(text); err != nil {
				for _, a := range p.added {
					delete(p.named, a)
				}
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

func (p *parser) text(schema string) (*node, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(schema))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d.More() {
		return nil, errors.New("text after the schema")
	}
	return p.parse(v, "")
}

var primitiveKinds = map[string]kind{
	"null": kNull, "boolean": kBool, "int": kInt, "long": kLong, "float": kFloat, "double": kDouble,
	"bytes": kBytes, "string": kString,
}

// parse parses schema v in enclosing namespace ns.
func (p *parser) parse(v any, ns string) (*node, error) {
	switch t := v.(type) {
	case string:
		if k, ok := primitiveKinds[t]; ok {
			return &node{kind: k, avroType: t}, nil
		}
		return p.ref(t, ns)
	case []any:
		n := &node{kind: kUnion, avroType: "union"}
		for i, b := range t {
			if _, nested := b.([]any); nested {
				return nil, fmt.Errorf("union branch %d is a union (unions may not nest)", i)
			}
			bn, err := p.parse(b, ns)
			if err != nil {
				return nil, fmt.Errorf("union branch %d: %w", i, err)
			}
			n.branches = append(n.branches, bn)
		}
		return n, nil
	case map[string]any:
		return p.object(t, ns)
	}
	return nil, fmt.Errorf("a schema is a type name, an object or an array (union), not %T", v)
}

// ref resolves a reference to a named type: a full name, or a name in
// the enclosing namespace, or in the null namespace.
func (p *parser) ref(name, ns string) (*node, error) {
	if !strings.Contains(name, ".") && ns != "" {
		if n, ok := p.named[ns+"."+name]; ok {
			return n, nil
		}
	}
	if n, ok := p.named[name]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("unknown type %q", name)
}

func (p *parser) object(m map[string]any, ns string) (*node, error) {
	switch typ := m["type"].(type) {
	case string:
		switch typ {
		case "record", "error":
			return p.record(m, ns)
		case "enum":
			return p.enum(m, ns)
		case "fixed":
			return p.fixed(m, ns)
		case "array":
			items, err := p.parse(m["items"], ns)
			if err != nil {
				return nil, fmt.Errorf("array items: %w", err)
			}
			return &node{kind: kArray, avroType: "array", items: items}, nil
		case "map":
			vals, err := p.parse(m["values"], ns)
			if err != nil {
				return nil, fmt.Errorf("map values: %w", err)
			}
			return &node{kind: kMap, avroType: "map", items: vals}, nil
		}
		if k, ok := primitiveKinds[typ]; ok {
			return primitive(typ, k, m), nil
		}
		return p.ref(typ, ns)
	case map[string]any, []any:
		return p.parse(typ, ns) // {"type": {...}}: the inner schema
	case nil:
		return nil, errors.New(`a schema object needs a "type"`)
	}
	return nil, fmt.Errorf(`"type" %v is not a type`, m["type"])
}

// fullName returns the full name of a named type and its namespace (the
// enclosing namespace of its fields' named types).
func fullName(m map[string]any, ns string) (full, space string, err error) {
	name, _ := m["name"].(string)
	if name == "" {
		return "", "", fmt.Errorf("a %v needs a name", m["type"])
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name, name[:i], nil
	}
	if s, ok := m["namespace"].(string); ok {
		ns = s
	}
	if ns == "" {
		return name, "", nil
	}
	return ns + "." + name, ns, nil
}

func (p *parser) define(full string, n *node) error {
	if _, ok := primitiveKinds[full]; ok {
		return fmt.Errorf("%q is a primitive type name", full)
	}
	if _, dup := p.named[full]; dup {
		return fmt.Errorf("type %s is defined twice", full)
	}
	p.named[full] = n
	p.added = append(p.added, full)
	return nil
}

func (p *parser) record(m map[string]any, ns string) (*node, error) {
	full, space, err := fullName(m, ns)
	if err != nil {
		return nil, err
	}
	if n := debeziumRecord(full, m); n != nil {
		return n, p.define(full, n)
	}
	n := &node{kind: kRecord, avroType: "record", name: full}
	if err := p.define(full, n); err != nil {
		return nil, err
	}
	fields, ok := m["fields"].([]any)
	if !ok {
		return nil, fmt.Errorf("record %s needs a fields array", full)
	}
	seen := map[string]bool{}
	for i, fv := range fields {
		fm, ok := fv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("record %s field %d is not an object", full, i)
		}
		name, _ := fm["name"].(string)
		if name == "" || seen[name] {
			return nil, fmt.Errorf("record %s field %d: a missing or repeated name %q", full, i, name)
		}
		seen[name] = true
		fn, err := p.parse(fm["type"], space)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", full, name, err)
		}
		_, hasDefault := fm["default"]
		key, _ := json.Marshal(name) // a string always marshals
		n.fields = append(n.fields, field{name: name, key: append(key, ':'), n: fn, hasDefault: hasDefault})
	}
	return n, nil
}

func (p *parser) enum(m map[string]any, ns string) (*node, error) {
	full, _, err := fullName(m, ns)
	if err != nil {
		return nil, err
	}
	syms, ok := m["symbols"].([]any)
	if !ok {
		return nil, fmt.Errorf("enum %s needs a symbols array", full)
	}
	n := &node{kind: kEnum, avroType: "enum", name: full}
	_, n.enumDefault = m["default"]
	for _, s := range syms {
		str, ok := s.(string)
		if !ok {
			return nil, fmt.Errorf("enum %s: symbol %v is not a string", full, s)
		}
		b, _ := json.Marshal(str)
		n.symbols = append(n.symbols, b)
		n.symbolNames = append(n.symbolNames, str)
	}
	return n, p.define(full, n)
}

func (p *parser) fixed(m map[string]any, ns string) (*node, error) {
	full, _, err := fullName(m, ns)
	if err != nil {
		return nil, err
	}
	size, ok := intProp(m, "size")
	if !ok || size < 0 {
		return nil, fmt.Errorf("fixed %s needs a size ≥ 0", full)
	}
	n := &node{kind: kFixed, avroType: "fixed", name: full, size: size}
	switch m["logicalType"] {
	case "decimal":
		if prec, scale, ok := decimalProps(m); ok {
			n.kind, n.precision, n.scale = kDecimalFixed, prec, scale
		}
	case "duration":
		if size == 12 {
			n.kind = kDuration
		}
	}
	return n, p.define(full, n)
}

// primitive is a primitive type written as an object: its logical type
// (or Debezium's connect.name) decides how it renders.
func primitive(typ string, k kind, m map[string]any) *node {
	n := &node{kind: k, avroType: typ}
	lt, _ := m["logicalType"].(string)
	switch {
	case lt == "decimal" && k == kBytes:
		if prec, scale, ok := decimalProps(m); ok {
			n.kind, n.precision, n.scale = kDecimalBytes, prec, scale
		}
	case lt == "date" && k == kInt:
		n.kind = kDate
	case lt == "time-millis" && k == kInt:
		n.kind = kTimeMillis
	case lt == "time-micros" && k == kLong:
		n.kind = kTimeMicros
	case lt == "timestamp-millis" && k == kLong:
		n.kind = kTimestampMillis
	case lt == "timestamp-micros" && k == kLong:
		n.kind = kTimestampMicros
	case lt == "local-timestamp-millis" && k == kLong:
		n.kind = kLocalTimestampMillis
	case lt == "local-timestamp-micros" && k == kLong:
		n.kind = kLocalTimestampMicros
	default: // uuid stays a string; unknown logical types read as their base
		name, _ := m["connect.name"].(string)
		n.kind = debeziumPrimitive(name, k)
	}
	return n
}

// decimalProps reads precision (> 0) and scale (0 ≤ scale ≤ precision).
func decimalProps(m map[string]any) (prec, scale int, ok bool) {
	prec, ok = intProp(m, "precision")
	if !ok || prec <= 0 {
		return 0, 0, false
	}
	if _, has := m["scale"]; has {
		if scale, ok = intProp(m, "scale"); !ok {
			return 0, 0, false
		}
	}
	if scale < 0 || scale > prec {
		return 0, 0, false
	}
	return prec, scale, true
}

func intProp(m map[string]any, key string) (int, bool) {
	num, ok := m[key].(json.Number)
	if !ok {
		return 0, false
	}
	i, err := num.Int64()
	if err != nil || i > 1<<31 {
		return 0, false
	}
	return int(i), true
}
