// Package fileload loads files into one Doris table atomically and in
// parallel with Stream Load two-phase commit (`doris-sink load`).
//
// The files are split into chunks on line boundaries (SplitChunks; a gzip
// file is one chunk, decompressed as it streams). W workers each stream
// a contiguous run of chunks through ONE 2PC Stream Load whose label is
// deterministic (label.BuildSub: prefix from the load id, the attempt
// number as checkpoint, the worker as sub-load). The protocol is the
// loader's (docs/design.md §2): the labels are announced durably in the
// Store before any load begins; when every worker has precommitted, one
// decision (all txn ids and the file positions they cover) is written
// durably; then every txn is committed by id, in worker order, so rows of
// a later file position are committed after earlier ones (a Unique Key
// table without a sequence column ends as a sequential load would).
// Before the decision nothing is visible and any failure aborts every txn;
// after it the commits complete, across a crash too: running the same load
// again (Run with the same Store) commits the decided txns and continues
// from the recorded position. Rows become visible in stages for the time
// the commits take (one commit request per worker).
//
// A load larger than one round may hold (every txn must be committed
// within stream_load_default_precommit_timeout_second of its precommit)
// is refused, or with Options.Split loaded in rounds, each atomic on its
// own and resumable from the position the last decided round reached.
//
// An input file changed since the load was planned does not stop a
// decided round from being committed (by txn id, no file read); a heal or
// a new round is then refused with a *MismatchError that names the rows
// already committed and never advises reloading them. Headers whose
// meaning depends on one body per file (line_delimiter other than "\n",
// enclose, skip_lines) are refused before anything begins.
package fileload
