// Package avrorow decodes Avro binary payloads (the bytes after the
// Confluent wire-format header) straight into one JSON object per record:
// a Doris row for a Stream Load JSON body.
//
// New compiles a registry schema once (its own parser of the Avro
// specification's schema JSON: github.com/hamba/avro/v2 has unfixed
// advisories, GO-2026-5046/5047/5048, that govulncheck reports for any
// importer) into a tree of nodes; AppendJSON walks that tree over the
// binary payload and appends JSON to the caller's buffer. There is no
// map[string]any or reflection per record: the steady state allocates
// nothing beyond the growth of dst (decimals wider than 64 bits excepted).
//
// The mapping (docs/configuration.md "Schema Registry formats"):
//
//	null                          null
//	boolean, int, long            true/false, number
//	float, double                 number (NaN and ±Inf refused: JSON has none)
//	string, uuid                  string
//	bytes, fixed                  base64 string (standard, padded)
//	enum                          its symbol, a string
//	array                         array
//	map                           object
//	record                        object (nested records stay nested)
//	union                         the value of the branch written (no {"type": v} wrapper)
//	decimal (bytes or fixed)      string of the exact digits, e.g. "-12.30"
//	date                          "YYYY-MM-DD"
//	time-millis, time-micros      "HH:MM:SS.fff", "HH:MM:SS.ffffff"
//	timestamp-millis, -micros     "YYYY-MM-DD HH:MM:SS.ffffff" in Options.TimeZone (UTC default)
//	local-timestamp-millis,-micros "YYYY-MM-DD HH:MM:SS.ffffff", the wall clock as written
//	duration (fixed 12)           {"months":m,"days":d,"millis":ms}
//
// Debezium's semantic types (connect.name io.debezium.time.Date, Time,
// MicroTime, NanoTime, Timestamp, MicroTimestamp, NanoTimestamp,
// ZonedTimestamp, io.debezium.data.VariableScaleDecimal) map like the
// logical types they stand for (debezium.go).
//
// A Decoder is safe for concurrent use: it holds only the compiled schema.
package avrorow
