// Package loader is doris-sink's two-phase-commit engine: it loads rows into
// Apache Doris exactly once through Stream Load 2PC (docs/design.md §2). It
// knows nothing about Kafka; positions are opaque JSON supplied by the
// caller.
//
// Two APIs:
//
//   - Participant, for applications with their own checkpoint coordinator
//     (the Go analogue of Flink's TwoPhaseCommitSink): Begin a txn with a
//     deterministic label, Write rows, Precommit to get a Committable that
//     the coordinator stores, then Commit or Abort it (idempotent); on
//     restart Recover the stored committables.
//
//   - Loader, a self-coordinating writer for one table with a durable
//     checkpoint store (package loader/checkpoint) and an evidence ledger
//     (package loader/ledger). Call Recover (it resolves every decided and
//     announced label, docs/design.md §2 recovery table, and returns the
//     position to resume from), then Write rows and Checkpoint their end
//     position. Each Checkpoint precommits, waits for the previous commit,
//     durably decides, and commits in the background while the next
//     checkpoint streams. After an error wrapping ErrNeedRecover call
//     Recover again and rewind to the position it returns.
//
// # Many tables
//
// A Loader loads one table (Config.Table, Write) or many: WriteTo names a
// table per row ("db.table" or a table of Config.DB); Config.Tables and
// AddTable configure a table's format and properties up front, others get
// Config's on their first row. A checkpoint has one Stream Load txn per
// table it touched and none for the others (no label spent); its first
// row in a table announces that table's label with its own store write
// (unless the table was touched in the previous checkpoint: the decision
// announced it for this one), then begins its load. At Checkpoint every
// load is precommitted (in parallel), one decision records every txn
// (checkpoint.Decision.Txns), and the txns are committed in the
// background; a failure before the decision aborts the txns of every
// table. Recover applies the recovery table to each txn and heals only the
// tables whose txn Doris aborted: while healing, rows of the other tables
// are skipped (counted in the ledger). Memory is Config.BufferSize per
// table open in the current checkpoint; Doris requests of one checkpoint
// run at most 8 at once.
//
// # Sub-loads
//
// Config.SubLoads (or Target.SubLoads per table) K > 1 streams a table's
// rows of one checkpoint through up to K concurrent Stream Loads: WriteKey
// and WriteToKey route a row to sub-load key mod K (the Kafka connector
// passes the source partition, so a key's versions stay in one load, in
// order; never round-robin). Each touched (table, sub-load) is its own 2PC
// txn with its own label (label.BuildSub; sub-load 0 keeps the label of
// K = 1), announced before it begins, and the one decision records them
// all (checkpoint.Txn.Sub, with K in Txn.Subs). Recovery, commit marks,
// heals and ledger entries are per txn: a heal replays the checkpoint's
// range into its aborted sub-loads only, routing with the decision's K.
// K = 1 (the default) writes the store, labels and ledger of before.
// Config.SubLoadsAuto chooses K per table between checkpoints from what
// the loads measured (subloads_auto.go); each sub-load's Stream Load
// carries doris.LoadRequest.BESlot 1 + (sub + checkpoint), which
// doris.Config.BESpread backends turns into K distinct BEs.
//
// # Identity checks
//
// A decided txn is committed and resolved by its txn id, never by label
// alone (docs/design.md §2, identity checks): a decided label that Doris
// holds committed under another txn than the decided one is an
// *IdentityError, a running txn under it is aborted by its own id before
// the heal, and, when the Doris client reads SHOW TRANSACTION
// (TxnInspector: a *doris.Client with Config.MySQL), Recover refuses a
// running txn under the job's prefix and scope that the store never
// announced (*SecondWriterError). Both wrap checkpoint.ErrFenced.
//
// Stream Load bodies are streamed through an io.Pipe with a bounded buffer
// (Config.BufferSize), so memory does not grow with checkpoint size.
//
// # Failpoints
//
// Config.Failpoints arms the cut points of the cycle (AllFailpoints, each
// documented with what is durable there) with ReturnError, Crash or Block.
// They are per loader, off by default, and used by this package's tests,
// which crash at every one, reopen on the same store and emulator
// (doris/doristest), and check the table row by row. The
// DORIS_SINK_FAILPOINTS variable (ParseFailpoints syntax) is read by
// cmd/doris-sink only; its run command exits at the crash point itself
// through Failpoints.OnCrash.
//
// # Evidence
//
// With Config.LedgerDir each checkpoint leaves ledger entries (package
// loader/ledger, docs/design.md §6), one set per txn, naming its table:
// "decided" with Doris's row counters,
// appended and fsync'd right after the decision is durable and before the
// commit starts, then "committed" with the same counters (read back from
// the decided entry when Recover commits it). CheckpointWith adds the
// caller's dead-lettered record count. LastDecision names the last decided
// checkpoint (the Kafka connector puts it in its group-commit metadata).
package loader
