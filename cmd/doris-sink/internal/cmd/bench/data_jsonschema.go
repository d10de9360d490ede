package bench

import "encoding/binary"

// jsonSchema is the JSON Schema of the rows rowGen writes: the json row's
// fields and types. A json_schema value is the json row itself after the
// Confluent header, so a json_schema case carries the json case's bytes
// plus 5 per record, and measures what the registry path adds.
const jsonSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Row","type":"object",` +
	`"properties":{"id":{"type":"integer"},"ts":{"type":"integer"},"customer":{"type":"string"},` +
	`"amount":{"type":"number"},"note":{"type":"string"}},"required":["id","ts","customer","amount","note"]}`

// jsonSchemaSubject is the registry subject of jsonSchema (apart from the
// avro and protobuf subjects, whose compatibility checks would refuse a
// JSON version).
const jsonSchemaSubject = "bench-json-schema-value"

// appendJSONSchema appends row i in the Confluent JSON Schema wire format:
// magic byte, schema id, the json row of the same size (no message index).
func (g *rowGen) appendJSONSchema(dst []byte, i int64) []byte {
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(g.jsonSchemaID))
	return (&rowGen{format: "json", size: g.size, pool: g.pool, ts: g.ts}).appendRow(dst, i)
}
