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
// loader/ledger, docs/design.md §6): "decided" with Doris's row counters,
// appended and fsync'd right after the decision is durable and before the
// commit starts, then "committed" with the same counters (read back from
// the decided entry when Recover commits it). CheckpointWith adds the
// caller's dead-lettered record count. LastDecision names the last decided
// checkpoint (the Kafka connector puts it in its group-commit metadata).
package loader
