// Package label builds, validates and parses the deterministic Doris Stream
// Load labels doris-sink uses (docs/design.md §3, docs/doris-facts.md §4):
//
//	<prefix>:<table-tag>:<scope>:<checkpoint>
//
// for example "orders-eos:demo-orders:0:42".
//
//   - prefix is the job name: 1..MaxPrefixLen characters of [A-Za-z0-9_-].
//   - table-tag names the target table. When the database and table names
//     consist only of [A-Za-z0-9_] and "db-table" is at most MaxTableTagLen
//     characters, the tag is exactly that: db + "-" + table. "-" cannot occur
//     in either name in this form, so distinct (db, table) pairs never give
//     the same tag. Otherwise (a name containing "-", ".", non-ASCII or other
//     characters, or too long) the tag is "h" followed by the first 16 lower
//     case hex digits of SHA-256(db + "\x00" + table). A hash tag contains no
//     "-", so it never equals a verbatim tag.
//   - scope names the writer instance: 1..MaxScopeLen characters of
//     [A-Za-z0-9_-]; "0" for a standalone writer.
//   - checkpoint is the checkpoint id in canonical decimal (no sign, no
//     leading zeros), at most 20 digits (any uint64).
//
// ":" separates the fields because job and table names contain "_" and "-"
// (the Flink connector's "_" joining aliases different tables). The field
// bounds add up so that every label Build returns has at most MaxLen (128)
// characters and matches Doris's rule Regexp. Labels are never random: the
// same inputs always give the same label, and Parse is the exact inverse of
// Build.
package label
