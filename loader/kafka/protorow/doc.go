// Package protorow decodes Protobuf records in the Confluent Schema
// Registry wire format into Doris JSON rows.
//
// New compiles the registry's schema text (with github.com/bufbuild/protocompile;
// imports come from the registry references, the well-known types
// google/protobuf/*.proto need none) and precomputes, per message type, a
// plan: field numbers to pre-encoded JSON keys, kinds and enum names. Each
// AppendJSON reads the Confluent message-index list, then walks the
// protobuf wire format straight into JSON (google.golang.org/protobuf/encoding/protowire),
// without building a message, so a record costs no allocation.
//
// # Mapping
//
// One row is one JSON object whose keys are the proto field names (not the
// camelCase json_name): scalars are JSON numbers (int64 and uint64 too, for
// BIGINT and LARGEINT columns), NaN and ±Infinity the strings "NaN",
// "Infinity", "-Infinity"; bytes are base64; enums their value name (an
// unknown number stays a number); nested messages are objects (for a Doris
// JSON or VARIANT column), repeated fields arrays, maps objects.
// google.protobuf.Timestamp is "YYYY-MM-DD HH:MM:SS.ffffff" in
// Options.TimeZone, Duration a number of seconds, the wrappers their value,
// Struct/Value/ListValue the JSON they hold. A field with presence (message
// fields, oneof members, proto3 optional, proto2 fields) is omitted when
// absent, so Doris writes the column's default or NULL; a proto3 field
// without presence cannot be told apart from its zero value, so it is
// written with that value. Fields the schema does not declare are skipped
// and counted (Decoder.UnknownFields). docs/configuration.md ("Protobuf → Doris")
// has the full table.
package protorow
