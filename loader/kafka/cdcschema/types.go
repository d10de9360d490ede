package cdcschema

import (
	"fmt"
	"strconv"
)

// Debezium and Kafka Connect semantic type names (the "name" of a field
// schema) the mapping knows.
const (
	ConnectDecimal   = "org.apache.kafka.connect.data.Decimal"
	ConnectDate      = "org.apache.kafka.connect.data.Date"
	ConnectTime      = "org.apache.kafka.connect.data.Time"
	ConnectTimestamp = "org.apache.kafka.connect.data.Timestamp"

	DebeziumDate           = "io.debezium.time.Date"
	DebeziumTime           = "io.debezium.time.Time"
	DebeziumMicroTime      = "io.debezium.time.MicroTime"
	DebeziumNanoTime       = "io.debezium.time.NanoTime"
	DebeziumZonedTime      = "io.debezium.time.ZonedTime"
	DebeziumTimestamp      = "io.debezium.time.Timestamp"
	DebeziumMicroTimestamp = "io.debezium.time.MicroTimestamp"
	DebeziumNanoTimestamp  = "io.debezium.time.NanoTimestamp"
	DebeziumZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	DebeziumYear           = "io.debezium.time.Year"
	DebeziumMicroDuration  = "io.debezium.time.MicroDuration"
	DebeziumInterval       = "io.debezium.time.Interval"
	DebeziumVarScaleDec    = "io.debezium.data.VariableScaleDecimal"
	DebeziumJSON           = "io.debezium.data.Json"
	DebeziumEnum           = "io.debezium.data.Enum"
	DebeziumEnumSet        = "io.debezium.data.EnumSet"
	DebeziumUUID           = "io.debezium.data.Uuid"
	DebeziumBits           = "io.debezium.data.Bits"
	DebeziumXML            = "io.debezium.data.Xml"
)

// Doris limits the mapping respects (fe ScalarType: MAX_VARCHAR_LENGTH
// 65533, DATETIMEV2 precision ≤ 6, DECIMALV3 precision ≤ 38).
const (
	MaxVarcharLength   = 65533
	maxDatetimePrec    = 6
	maxDecimalPrec     = 38
	utf8BytesPerSource = 3
)

// DorisType returns the Doris column type of f (upper case, as
// schema.Column.Type holds it), or an error naming the field when f's type
// cannot be mapped. The table of docs/configuration.md "Debezium types"
// describes it.
func DorisType(f Field) (string, error) {
	switch f.Semantic {
	case ConnectDecimal:
		return decimalType(f), nil
	case DebeziumVarScaleDec:
		// No precision or scale travels with it: the Doris Kafka connector
		// (VariableScaleDecimalType.java) maps it to DOUBLE.
		return "DOUBLE", nil
	case DebeziumDate, ConnectDate:
		return "DATE", nil
	case DebeziumTimestamp, ConnectTimestamp:
		return datetimeType(f, 3), nil
	case DebeziumMicroTimestamp, DebeziumNanoTimestamp, DebeziumZonedTimestamp:
		return datetimeType(f, 6), nil
	case DebeziumTime, DebeziumMicroTime, DebeziumNanoTime, DebeziumZonedTime, ConnectTime,
		DebeziumInterval, DebeziumEnum, DebeziumEnumSet, DebeziumUUID, DebeziumBits, DebeziumXML:
		// Doris has no TIME column type; the Flink connector's MysqlType maps
		// TIME and ENUM to STRING.
		return "STRING", nil
	case DebeziumYear:
		return "INT", nil
	case DebeziumMicroDuration:
		return "BIGINT", nil
	case DebeziumJSON:
		return "JSON", nil
	}
	switch f.Type {
	case "int8":
		return "TINYINT", nil
	case "int16":
		return "SMALLINT", nil
	case "int32":
		return "INT", nil
	case "int64":
		return "BIGINT", nil
	case "float32":
		return "FLOAT", nil
	case "float64":
		return "DOUBLE", nil
	case "boolean":
		return "BOOLEAN", nil
	case "string":
		return stringType(f), nil
	case "bytes", "map", "struct":
		return "STRING", nil
	case "array":
		if f.Items == nil {
			return "STRING", nil
		}
		elem, err := DorisType(*f.Items)
		if err != nil {
			return "", fmt.Errorf("array %s: %w", f.Name, err)
		}
		return "ARRAY<" + elem + ">", nil
	}
	return "", fmt.Errorf("field %s: Connect type %q (semantic %q) has no Doris mapping", f.Name, f.Type, f.Semantic)
}

// param returns the integer parameter name of f, ok false when absent or
// not an integer.
func (f Field) param(name string) (int, bool) {
	v, ok := f.Parameters[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// stringType is VARCHAR(3·n) for a source column of length n (the
// __debezium.source.column.length parameter), STRING without one or when
// 3·n exceeds MaxVarcharLength (MysqlType.java, ConnectStringType.java).
func stringType(f Field) string {
	n, ok := f.param(ParamSourceLength)
	if !ok || n <= 0 || n*utf8BytesPerSource > MaxVarcharLength {
		return "STRING"
	}
	return "VARCHAR(" + strconv.Itoa(n*utf8BytesPerSource) + ")"
}

// decimalType is DECIMAL(p,s) from connect.decimal.precision (else the
// source column length) and scale; STRING beyond 38 digits
// (ConnectDecimalType.java). Without any precision it is DECIMAL(38,s).
func decimalType(f Field) string {
	scale, _ := f.param(ParamScale)
	scale = max(scale, 0)
	prec, ok := f.param(ParamPrecision)
	if !ok {
		prec, ok = f.param(ParamSourceLength)
	}
	if !ok || prec <= 0 {
		prec = maxDecimalPrec
	}
	if prec > maxDecimalPrec {
		return "STRING"
	}
	prec = max(prec, scale, 1)
	return "DECIMAL(" + strconv.Itoa(prec) + "," + strconv.Itoa(scale) + ")"
}

// datetimeType is DATETIME(p): p from the source column's scale (else its
// length, which Debezium's MySQL connector uses for the fractional digits,
// AbstractTimeType.java), else def (the precision the semantic type
// carries: milliseconds 3, micro- and nanoseconds 6), at most 6.
func datetimeType(f Field, def int) string {
	p, ok := f.param(ParamSourceScale)
	if !ok {
		p, ok = f.param(ParamSourceLength)
	}
	if !ok || p < 0 {
		p = def
	}
	return "DATETIME(" + strconv.Itoa(min(p, maxDatetimePrec)) + ")"
}
