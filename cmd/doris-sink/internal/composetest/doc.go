// Package composetest holds the composition matrix of issue 28 (tests
// only): every records.format × records.envelope × routing ×
// records.schema_evolution × deletes × delivery.guarantee combination is
// either refused at config load with a message naming the keys, or (a
// pairwise covering subset of them) loaded end to end in-process — kfake,
// the Doris emulator and the in-process Schema Registry — through one
// schema change and one crash at a failpoint, then checked row by row
// per key, by verify, and for lingering transactions. docs/configuration.md's
// "Formats, routing, evolution and deletes together" table is checked
// against the matrix (TestDocsTableMatchesMatrix).
package composetest
