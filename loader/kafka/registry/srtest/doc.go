// Package srtest is an in-process Confluent Schema Registry for tests and
// the sandbox (`doris-sink dev --schema-registry`): the REST subset that
// producers (pkg/sr, Confluent serializers) and consumers use, with fault
// handles. It is never linked into a production build (.ci/run checks the
// nodev build).
//
// Behavior (Confluent Schema Registry REST API, docs/emulator.md "Schema
// Registry"):
//
//   - POST /subjects/{s}/versions registers a schema: the same schema (text,
//     type, references) under the same subject returns its id without a new
//     version; the same schema under another subject reuses its id. AVRO
//     schemas must parse (42201) and pass the subject's compatibility level
//     against the latest version (or all, *_TRANSITIVE), checked with the
//     Avro schema resolution rules (avrorow.Schema.CanRead; 409 when not). A compatibility check
//     of another schema type is refused (42201) rather than faked: set the
//     subject's level to NONE to register PROTOBUF or JSON versions after
//     the first.
//   - POST /subjects/{s} looks a schema up (40401, 40403).
//   - GET /schemas/ids/{id} (40403), GET /schemas/ids/{id}/versions, GET /schemas/types, GET /subjects,
//     GET /subjects/{s}/versions (40401), GET /subjects/{s}/versions/{v|latest}
//     (40401, 40402).
//   - GET/PUT /config and /config/{s} (a subject without its own level:
//     40408 unless ?defaultToGlobal=true); levels BACKWARD (the default),
//     BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL,
//     FULL_TRANSITIVE, NONE (42203 otherwise).
//   - POST /compatibility/subjects/{s}/versions/{v|latest} checks against that
//     version; POST /compatibility/subjects/{s}/versions against what the
//     level names. Same checker, same refusal for non-AVRO types.
//
// Errors are {"error_code": n, "message": "..."} with the HTTP status of
// the code's first three digits, as the registry answers.
//
// Faults: SetDown makes every request fail with 503; HideNewIDs makes
// GET /schemas/ids/{id} of each id registered afterwards answer 404 for
// its first n calls (a registration not yet visible on a follower).
package srtest
