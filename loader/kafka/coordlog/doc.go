// Package coordlog is the Kafka coordinator log of a doris-sink job
// (docs/design.md §7, issue 12): the 2PC decisions live in Kafka, fenced by
// Kafka, instead of in a local file.
//
// # What it is
//
//   - One compacted state topic per job, StateTopic(job)
//     ("doris-sink.state.<job>", one partition, cleanup.policy=compact),
//     created on first open when the principal may create topics.
//   - One record per save, key RecordKey(job, scope) ("<job>/<scope>"), its
//     value an opaque, versioned blob the caller encodes (Store encodes a
//     checkpoint.State with checkpoint.Encode inside a small document).
//     Compaction keeps the newest record of every writer scope.
//   - Every save is one Kafka transaction (KIP-98) of the transactional id
//     TransactionalID(job, scope) that produces the record and, in the same
//     transaction, commits the consumer group offsets of the positions the
//     state decides (AddOffsetsToTxn + TxnOffsetCommit), with the small
//     metadata "doris-sink:chk=<id>" (large data never goes into offset
//     metadata, which Kafka caps at offset.metadata.max.bytes = 4096). The
//     record and the offsets become visible together or not at all.
//   - Fencing: Open initialises the producer id of the transactional id
//     (InitProducerID). That bumps the producer epoch, aborts any
//     transaction the previous incarnation left open, and makes every later
//     write of the previous incarnation fail with PRODUCER_FENCED /
//     INVALID_PRODUCER_EPOCH, which this package returns as a *FencedError
//     wrapping ErrFenced (= checkpoint.ErrFenced): fatal, never retried.
//   - Dead letters: Store.StageDeadLetters hands it a checkpoint's dead
//     letters; the Save that decides that checkpoint produces them in its
//     transaction (CommitWith, in chunks within the dead-letter topic's
//     max.message.bytes), so they become visible with the decision, exactly
//     once: every decision, a heal too, produces only those past the
//     per-partition mark its document records (deadletter_mark.go), and
//     records the rows Doris refused for the heals to come (RefusedRows).
//     AllFailpoints are the cut points of
//     such a transaction (Config.Failpoint).
//   - Load reads the partition with read_committed up to its last stable
//     offset, after Open fenced the predecessors, so it sees everything they
//     committed and nothing they left open.
//   - Readers that must not fence (operator commands) use ReadSnapshot: the
//     same read_committed scan, without creating the topic or initialising
//     a producer id. Operator decisions (`checkpoint resolve`) are written
//     with WriteOperator under OperatorKey and OperatorTransactionalID,
//     never the job's own, and applied by the owner at its next start
//     (Store.PendingOperator).
//
// # Why a standalone transactional producer, not a group member
//
// `doris-sink run` today assigns the topic's partitions directly (no group
// membership), so there is no group generation to stamp a TxnOffsetCommit
// with (KIP-447). The producer epoch of the job's transactional id is the
// fence: it is bumped by every Open, so two processes started with the same
// job config cannot both write. Offsets are committed with generation -1 and
// no member id, which Kafka accepts for a group without members. Group mode
// (several members, one scope each, generation-stamped commits) builds on
// the same record shape; see docs/design.md.
//
// # Group mode: writer slots
//
// With job.slots = S ≥ 2 a job has S writer slots; partition p of topic t
// belongs to slot SlotOf(t, p, S), and each slot is a Log of its own
// (scope SlotScope(j), key RecordKey(job, j), transactional id
// TransactionalID(job, j)), fenced by its producer epoch exactly as the
// standalone writer. The members of the job's consumer group own slots
// (partitions of SlotTopic(job)); a slot's decisions carry the member's id
// and generation (Config.Stamp, KIP-447): the group coordinator refuses a
// stale stamp, and the Commit aborts the transaction and returns a
// *GenerationError, never resent; a slot not owned when the transaction
// would begin is a *NotOwnerError. Both wrap kafka.ErrNotOwner. Every
// state record records the slot count (Source.Slots, absent = 1), and a
// Store opened with another count is refused (*SlotsMismatchError).
package coordlog
