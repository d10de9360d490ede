package avrorow

// Debezium's semantic types: plain Avro int/long/string/record types that
// Debezium's Avro converter names in the schema's "connect.name" property
// (Debezium documentation, "Temporal types" and "Decimal types": with
// time.precision.mode adaptive or adaptive_time_microseconds, the default,
// DATE, TIME and DATETIME columns arrive as these, not as Avro logical
// types). Without this mapping a DATETIME would load as a bare number.
const (
	dbzDate                 = "io.debezium.time.Date"           // int: days since the epoch
	dbzTime                 = "io.debezium.time.Time"           // int: ms past midnight
	dbzMicroTime            = "io.debezium.time.MicroTime"      // long: µs past midnight
	dbzNanoTime             = "io.debezium.time.NanoTime"       // long: ns past midnight
	dbzTimestamp            = "io.debezium.time.Timestamp"      // long: ms since the epoch, no zone (a DATETIME)
	dbzMicroTimestamp       = "io.debezium.time.MicroTimestamp" // long: µs since the epoch, no zone
	dbzNanoTimestamp        = "io.debezium.time.NanoTimestamp"  // long: ns since the epoch, no zone
	dbzZonedTimestamp       = "io.debezium.time.ZonedTimestamp" // string: ISO-8601 with offset (a TIMESTAMP)
	dbzVariableScaleDecimal = "io.debezium.data.VariableScaleDecimal"
)

// debeziumPrimitive returns the kind of a primitive named by Debezium's
// connect.name, or k when it names none (or the wrong primitive).
func debeziumPrimitive(name string, k kind) kind {
	switch {
	case name == dbzDate && k == kInt:
		return kDate
	case name == dbzTime && k == kInt:
		return kTimeMillis
	case name == dbzMicroTime && k == kLong:
		return kTimeMicros
	case name == dbzNanoTime && k == kLong:
		return kTimeNanos
	case name == dbzTimestamp && k == kLong:
		return kLocalTimestampMillis
	case name == dbzMicroTimestamp && k == kLong:
		return kLocalTimestampMicros
	case name == dbzNanoTimestamp && k == kLong:
		return kLocalTimestampNanos
	case name == dbzZonedTimestamp && k == kString:
		return kZonedTimestamp
	}
	return k
}

// debeziumRecord returns the node of Debezium's VariableScaleDecimal (a
// record {scale: int, value: bytes}, decimal.handling.mode precise for
// columns without a fixed scale), rendered as a decimal string; nil for
// any other record.
func debeziumRecord(full string, m map[string]any) *node {
	name, _ := m["connect.name"].(string)
	if name != dbzVariableScaleDecimal && full != dbzVariableScaleDecimal {
		return nil
	}
	f, _ := m["fields"].([]any)
	if len(f) != 2 {
		return nil
	}
	typeOf := func(i int, want string) bool {
		fm, _ := f[i].(map[string]any)
		return fm != nil && fm["name"] == want && (fm["type"] == map[string]string{"scale": "int", "value": "bytes"}[want])
	}
	if !typeOf(0, "scale") || !typeOf(1, "value") {
		return nil
	}
	return &node{kind: kVariableScaleDecimal, avroType: "record", name: full,
		fields: []field{{name: "scale", n: &node{kind: kInt, avroType: "int"}}, {name: "value", n: &node{kind: kBytes, avroType: "bytes"}}}}
}
