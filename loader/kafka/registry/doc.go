// Package registry reads Confluent Schema Registry records: it parses the
// wire format (magic byte 0, big-endian 4-byte schema id, payload), fetches
// each schema id once through franz-go's pkg/sr client (references resolved
// transitively), builds one decoder per schema id through a factory chosen
// by the schema's type, and caches it.
//
// Failures are split by who can fix them (docs/configuration.md "Schema
// Registry formats"):
//
//   - the registry is down, or does not know the id yet (404: a producer's
//     registration not yet visible): retried within a bound
//     (Config.MaxWait of backoff), then a *FetchError that matches
//     ErrUnavailable. The connector refuses the record (the run stops at its
//     offset, nothing is skipped); it is never a dead letter.
//   - the record itself is bad (not the wire format, a schema of another
//     type, a payload that does not decode with its schema): a
//     *RecordError, which the connector dead-letters (or refuses without a
//     dead-letter topic).
package registry
