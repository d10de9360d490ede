package avrorow

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
	// avroType is the Avro type the node was written as ("int", "record",
	// "union", ...): what schema resolution compares (CanRead).
	avroType string
	// name is the full name of a record, enum or fixed.
	name string
	// size is the byte size of a fixed.
	size int
	// scale and precision of a decimal.
	scale, precision int
	// symbols are the JSON-encoded symbols of an enum, symbolNames the
	// symbols; enumDefault says the enum has a default symbol.
	symbols     [][]byte
	symbolNames []string
	enumDefault bool
	// items is the element of an array, the value of a map.
	items *node
	// branches are the types of a union.
	branches []*node
	// fields are the fields of a record, in schema (wire) order.
	fields []field
}

// field is one record field: its pre-encoded `"name":` key.
type field struct {
	name       string
	key        []byte
	n          *node
	hasDefault bool
}
