// Package jsonschemarow decodes JSON Schema records in the Confluent Schema
// Registry wire format into Doris JSON rows.
//
// A Confluent JSON Schema payload is the JSON document itself after the
// 5-byte header (no message index). The row is that document, which must
// be one JSON object, compacted. With Options.Validate each record is also
// validated against the registry schema (github.com/santhosh-tekuri/jsonschema/v6;
// the Confluent KafkaJsonSchemaDeserializer validates only with
// json.fail.invalid.schema=true, default false, and so this is off by
// default). Strings the schema declares `"format": "date-time"` (RFC 3339,
// with an offset) are rewritten to Doris DATETIME(6) text
// "YYYY-MM-DD HH:MM:SS.ffffff" in Options.TimeZone, so a DATETIME column
// gets the same instant whatever the Doris version's handling of offsets;
// Options.KeepDateTime turns this off. docs/configuration.md ("JSON Schema → Doris")
// has the table.
package jsonschemarow
