package avrorow

import (
	"encoding/json"
	"fmt"

	"github.com/hamba/avro/v2"
)

// kind is what a node decodes.
type kind uint8

const (
	kNull kind = iota
	kBool
	kInt
	kLong
	kFloat
	kDouble
	kString
	kBytes
	kFixed
	kEnum
	kArray
	kMap
	kUnion
	kRecord
	kDecimalBytes
	kDecimalFixed
	kDate
	kTimeMillis
	kTimeMicros
	kTimestampMillis
	kTimestampMicros
	kLocalTimestampMillis
	kLocalTimestampMicros
	kDuration
	// Debezium semantic types (connect.name), see debezium.go.
	kTimeNanos
	kLocalTimestampNanos
	kZonedTimestamp
	kVariableScaleDecimal
)

// node is one compiled schema type.
type node struct {
	kind kind
	// size is the byte size of a fixed.
	size int
	// scale and precision of a decimal.
	scale, precision int
	// symbols are the JSON-encoded symbols of an enum.
	symbols [][]byte
	// items is the element of an array, the value of a map.
	items *node
	// branches are the types of a union.
	branches []*node
	// fields are the fields of a record, in schema (wire) order.
	fields []field
}

// field is one record field: its pre-encoded `"name":` key.
type field struct {
	name string
	key  []byte
	n    *node
}

// compiler turns a parsed hamba schema into nodes; named records are
// compiled once, so recursive types (a record holding itself) terminate.
type compiler struct {
	named map[string]*node
}

func (c *compiler) compile(s avro.Schema) (*node, error) {
	switch t := s.(type) {
	case *avro.RefSchema:
		return c.compile(t.Schema())
	case *avro.NullSchema:
		return &node{kind: kNull}, nil
	case *avro.PrimitiveSchema:
		return primitive(t)
	case *avro.RecordSchema:
		if n, ok := c.named[t.FullName()]; ok {
			return n, nil
		}
		if n := debeziumRecord(t); n != nil {
			return n, nil
		}
		n := &node{kind: kRecord}
		c.named[t.FullName()] = n
		for _, f := range t.Fields() {
			fn, err := c.compile(f.Type())
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", t.FullName(), f.Name(), err)
			}
			key, _ := json.Marshal(f.Name()) // a string always marshals
			n.fields = append(n.fields, field{name: f.Name(), key: append(key, ':'), n: fn})
		}
		return n, nil
	case *avro.EnumSchema:
		n := &node{kind: kEnum}
		for _, sym := range t.Symbols() {
			b, _ := json.Marshal(sym)
			n.symbols = append(n.symbols, b)
		}
		return n, nil
	case *avro.ArraySchema:
		items, err := c.compile(t.Items())
		if err != nil {
			return nil, err
		}
		return &node{kind: kArray, items: items}, nil
	case *avro.MapSchema:
		vals, err := c.compile(t.Values())
		if err != nil {
			return nil, err
		}
		return &node{kind: kMap, items: vals}, nil
	case *avro.UnionSchema:
		n := &node{kind: kUnion}
		for _, b := range t.Types() {
			bn, err := c.compile(b)
			if err != nil {
				return nil, err
			}
			n.branches = append(n.branches, bn)
		}
		return n, nil
	case *avro.FixedSchema:
		n := &node{kind: kFixed, size: t.Size()}
		switch l := t.Logical().(type) {
		case *avro.DecimalLogicalSchema:
			n.kind, n.precision, n.scale = kDecimalFixed, l.Precision(), l.Scale()
		case nil:
		default:
			if l.Type() == avro.Duration && t.Size() == 12 {
				n.kind = kDuration
			}
		}
		return n, nil
	}
	return nil, fmt.Errorf("unsupported Avro type %s", s.Type())
}

func primitive(t *avro.PrimitiveSchema) (*node, error) {
	base := map[avro.Type]kind{
		avro.Boolean: kBool, avro.Int: kInt, avro.Long: kLong, avro.Float: kFloat,
		avro.Double: kDouble, avro.String: kString, avro.Bytes: kBytes, avro.Null: kNull,
	}
	k, ok := base[t.Type()]
	if !ok {
		return nil, fmt.Errorf("unsupported Avro primitive %s", t.Type())
	}
	n := &node{kind: k}
	l := t.Logical()
	if l == nil {
		n.kind = debeziumPrimitive(t, k)
		return n, nil
	}
	// A logical type on the wrong primitive is ignored, as the Avro
	// specification says: the value is read as its primitive.
	switch lt := l.Type(); {
	case lt == avro.Decimal && k == kBytes:
		d := l.(*avro.DecimalLogicalSchema)
		n.kind, n.precision, n.scale = kDecimalBytes, d.Precision(), d.Scale()
	case lt == avro.Date && k == kInt:
		n.kind = kDate
	case lt == avro.TimeMillis && k == kInt:
		n.kind = kTimeMillis
	case lt == avro.TimeMicros && k == kLong:
		n.kind = kTimeMicros
	case lt == avro.TimestampMillis && k == kLong:
		n.kind = kTimestampMillis
	case lt == avro.TimestampMicros && k == kLong:
		n.kind = kTimestampMicros
	case lt == avro.LocalTimestampMillis && k == kLong:
		n.kind = kLocalTimestampMillis
	case lt == avro.LocalTimestampMicros && k == kLong:
		n.kind = kLocalTimestampMicros
	}
	return n, nil // uuid (on string) stays a string
}
