package protorow

// builtinImports are the imports the Confluent Schema Registry treats as
// known dependencies and never sends as references (ProtobufSchema
// KNOWN_DEPENDENCIES in confluentinc/schema-registry): schemas written by
// Confluent's Kafka Connect ProtobufConverter import them for decimals,
// dates and times, and field options. They are written here from the
// message shapes (field names and numbers are the wire contract); a
// reference of the same name in refs takes precedence. The google/protobuf
// files come from protocompile's standard imports.
var builtinImports = map[string]string{
	"confluent/meta.proto": `syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
}
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
`,
	// value: the unscaled integer, big-endian two's complement.
	"confluent/type/decimal.proto": `syntax = "proto3";
package confluent.type;
message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
`,
	"google/type/date.proto": `syntax = "proto3";
package google.type;
message Date {
  int32 year = 1;
  int32 month = 2;
  int32 day = 3;
}
`,
	"google/type/timeofday.proto": `syntax = "proto3";
package google.type;
message TimeOfDay {
  int32 hours = 1;
  int32 minutes = 2;
  int32 seconds = 3;
  int32 nanos = 4;
}
`,
}
