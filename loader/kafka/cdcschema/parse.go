package cdcschema

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Field is one field of a Kafka Connect struct schema, as the JSON
// converter writes it: {"type":"int32","optional":false,"field":"id",
// "name":"io.debezium.time.Date","parameters":{…},"default":…}.
type Field struct {
	// Name is the field name ("field").
	Name string `json:"field"`
	// Type is the Connect schema type: int8, int16, int32, int64, float32,
	// float64, boolean, string, bytes, array, map, struct.
	Type string `json:"type"`
	// Optional is false for a field that is never null.
	Optional bool `json:"optional"`
	// Semantic is the logical type name ("name"), e.g.
	// org.apache.kafka.connect.data.Decimal or io.debezium.time.Date.
	Semantic string `json:"name,omitempty"`
	// Parameters are the schema parameters, e.g. scale and
	// connect.decimal.precision of a Decimal, or the
	// __debezium.source.column.* parameters of column.propagate.source.type.
	Parameters map[string]string `json:"parameters,omitempty"`
	// Items is the element schema of an array.
	Items *Field `json:"items,omitempty"`
	// Fields are the fields of a struct.
	Fields []Field `json:"fields,omitempty"`
}

// Connect parameters read by the mapping.
const (
	ParamScale          = "scale"
	ParamPrecision      = "connect.decimal.precision"
	ParamSourceType     = "__debezium.source.column.type"
	ParamSourceLength   = "__debezium.source.column.length"
	ParamSourceScale    = "__debezium.source.column.scale"
	envelopeImageAfter  = "after"
	envelopeImageBefore = "before"
)

// ErrNoSchema: the value carries no Connect schema (the JSON converter ran
// with schemas.enable=false, or the value is not a schema/payload envelope).
var ErrNoSchema = errors.New(`no Kafka Connect schema: want {"schema":…,"payload":…} (value.converter.schemas.enable=true)`)

type envelope struct {
	Schema *Field `json:"schema"`
}

// RowFields returns the fields of the row image of a Debezium change event
// value in the schema/payload envelope: the fields of the "after" struct
// (or "before" when the schema has no "after"). ErrNoSchema when the value
// has no schema block.
func RowFields(value []byte) ([]Field, error) {
	s, err := schemaOf(value)
	if err != nil {
		return nil, err
	}
	var before *Field
	for i := range s.Fields {
		f := &s.Fields[i]
		switch f.Name {
		case envelopeImageAfter:
			return imageFields(f)
		case envelopeImageBefore:
			before = f
		}
	}
	if before != nil {
		return imageFields(before)
	}
	return nil, fmt.Errorf(`schema %q has no "after" or "before" struct: not a Debezium change event schema`, s.Semantic)
}

// RowFieldsOfSchema is RowFields for the raw "schema" block itself.
func RowFieldsOfSchema(schemaBlock []byte) ([]Field, error) {
	return RowFields(append(append([]byte(`{"schema":`), schemaBlock...), '}'))
}

func imageFields(f *Field) ([]Field, error) {
	if f.Type != "struct" || len(f.Fields) == 0 {
		return nil, fmt.Errorf("the %q image schema is %s without fields, want a struct", f.Name, f.Type)
	}
	return f.Fields, nil
}

// KeyFields returns the field names of a record key in the schema/payload
// envelope (the primary key Debezium writes as the record key), in order.
// ErrNoSchema when the key has no schema block.
func KeyFields(key []byte) ([]string, error) {
	s, err := schemaOf(key)
	if err != nil {
		return nil, fmt.Errorf("record key: %w", err)
	}
	if s.Type != "struct" || len(s.Fields) == 0 {
		return nil, fmt.Errorf("record key schema is %s without fields, want a struct of the primary key columns", s.Type)
	}
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return names, nil
}

func schemaOf(v []byte) (*Field, error) {
	if len(v) == 0 {
		return nil, ErrNoSchema
	}
	var env envelope
	if err := json.Unmarshal(v, &env); err != nil {
		return nil, fmt.Errorf("read the Connect schema: %w", err)
	}
	if env.Schema == nil {
		return nil, ErrNoSchema
	}
	return env.Schema, nil
}
