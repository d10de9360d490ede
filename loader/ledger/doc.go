// Package ledger is doris-sink's evidence trail (docs/design.md §6): an
// append-only file of JSON lines, dir/ledger.jsonl, one Entry per event
// (a checkpoint decided, committed, aborted, healed or resolved by an
// operator). `doris-sink verify` reconciles it with Doris and the source.
//
// Every Append is one write of one line ending in "\n", followed by fsync;
// when Append returns nil the entry survives a crash. A crash during an
// Append can leave a torn last line (no trailing "\n"): Read tolerates and
// reports it (*TornTail), Open cuts it off. Any other malformed line is an
// error naming its line number: the ledger is never silently rewritten.
//
// The ledger is evidence, not the coordinator's log: the checkpoint store
// decides; an entry whose Append did not return may be missing.
package ledger
