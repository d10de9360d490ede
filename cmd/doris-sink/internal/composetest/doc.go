// Package composetest holds the composition matrix of issue 28 (tests
// only): every records.format × records.envelope × routing ×
// records.schema_evolution × deletes × delivery.guarantee combination is
// either refused at config load with a message naming the keys (every
// point of the product is loaded and its outcome logged: go test -v), or
// loaded end to end in-process — for a pairwise covering subset of the
// supported points (every value pair of any two dimensions that a
// supported point has is in at least one run: 34 runs of 300 supported
// points, chosen greedily, the issue's own Avro Debezium case first) — kfake,
// the Doris emulator and the in-process Schema Registry — through one
// schema change and one crash at a failpoint, then checked row by row
// per key, by verify, and for lingering transactions. docs/configuration.md's
// "Formats, routing, evolution and deletes together" table is checked
// against the matrix (TestDocsTableMatchesMatrix).
package composetest
