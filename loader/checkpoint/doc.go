// Package checkpoint is the durable log of doris-sink's two-phase-commit
// coordinator (docs/design.md §2): for one job, target table, source and writer
// it holds the last decided checkpoint, the labels announced but not yet
// decided, the next checkpoint id, a bounded history of earlier decisions
// and the operator's resolutions.
//
// A Store is written with Save, which durably replaces the whole State, and
// read with Load. FileStore keeps the state in one file in a data directory
// (see OpenFile for the format, the lock and ownership rules); Memory keeps
// it in memory for tests of other packages and can simulate a crash.
//
// Nothing corrupt is ever reset: a truncated, hand-edited or otherwise
// invalid file is refused with a *CorruptError naming the file, and the
// operator restores it from a backup or rebuilds it from the ledger.
//
// # Invariants
//
// State.Validate, run by every Save and Load, checks (violations are
// *InvariantError naming the checkpoint id):
//
//   - Owner: Job is a valid label prefix, Writer a valid label scope, DB and
//     Table are not empty (package label).
//   - Checkpoint ids start at 1; NextID > every id in the state.
//   - Every label is exactly Owner.SubLabel(table, sub, id) (docs/design.md
//     §3), which is Owner.TxnLabel(table, id) for sub-load 0,
//     Owner.Label(id) for the owner's table: a label of another job,
//     table, writer or checkpoint is refused. A decision's Label is always
//     Owner.Label(id).
//   - Decided, with Txns (format 2): each txn has a db.table, a sub-load
//     in [0, Subs) (Subs in [0, 256], 0 meaning 1, the same for every txn
//     of a table), its deterministic label and a txn id > 0; no
//     (table, sub-load) twice; not Empty;
//     TxnID is the owner table's txn id (0 when untouched); Committed ⇔
//     every txn committed (a one-txn decision marked Committed marks its
//     txn); per txn CommittedAt only when committed, Healed ≥ 0, counts ≥ 0.
//   - Decided, without Txns (format-1 form, normalised to one Txn by Decode,
//     Encode and State.Decide): not Empty ⇒ TxnID > 0; Empty ⇒ TxnID == 0.
//   - Every decision: DecidedAt set;
//     CommittedAt set only when Committed; Healed ≥ 0; Start and End are
//     valid JSON when present; no Counts field is negative (Counts may be
//     nil: stores written before they were recorded).
//   - History: at most MaxHistory decisions, ids strictly increasing and all
//     below Decided.ID (History holds the decisions Decided replaced; it is
//     empty while Decided is nil).
//   - Announced: ids not decreasing, each (id, table) once, none equal to Decided.ID or to a
//     History id (an announced label is by definition undecided). Ids below
//     Decided.ID are allowed: an abandoned attempt stays announced until
//     recovery aborts it.
//   - Resolved: each names a checkpoint id below NextID with its label,
//     Assumed is ResolvedVisible or ResolvedAborted, By and At are set.
//
// Save also refuses to move the store backwards relative to the state last
// loaded or saved through the same Store: NextID never decreases, and
// Decided never disappears or moves to a lower id.
//
// # Format compatibility
//
// The file format is version 2 (FormatVersion): a decision holds one Txn
// per table it touched (Decision.Txns), announcements and resolutions name
// their table. Decode still reads version 1 (OldestFormatVersion): each
// decision of a version-1 file becomes one Txn of the owner's table and
// each announcement the owner's; Encode then writes version 2. Within
// version 1, Decision.Counts was added as an optional field: a file
// without counts decodes with Counts nil. An older doris-sink refuses a
// version-2 file ("written by a newer doris-sink"), so a store cannot be
// silently downgraded. testdata holds a golden file of each version.
// Within version 2, State.Incarnation and Decision.Incarnation were added
// as optional fields: a file without them decodes with them empty; a
// doris-sink from before them refuses a file holding them (unknown field).
//
// # Incarnations
//
// OpenFile writes a new random incarnation id (FileStore.Incarnation) into
// the store, durably, before it returns; every Save writes it into the
// state, and into the decision it saves when that decision is new, so a
// decision names the open that made it. Before every Load and Save the
// store checks that the file still holds its incarnation. A directory
// restored from a copy or replaced under the running process (another
// process may have opened the replacement: the lock is on the replaced
// directory's LOCK file) holds another one, or none: the store refuses
// that Save and every later call with an *IncarnationError wrapping
// ErrFenced, and writes nothing. The check and the rename are not atomic:
// a replacement made between them is seen at the next Save.
//
// # What a file store cannot protect against
//
// A FileStore is the coordinator's log only while its directory is the
// one, never lost and never restored, owner of the job's labels. Its lock
// refuses a second open of the same directory, its owner check a store of
// another job, and its incarnation check a directory swapped under a
// running process. The loader adds checks made in Doris, which hold
// whatever the store says: a decided label committed under another txn id
// than the decision recorded stops the job (loader.IdentityError), and,
// with SHOW TRANSACTION available, a running txn under the job's prefix
// and scope that the store never announced refuses the start
// (loader.SecondWriterError). Those checks detect another writer when its
// labels meet this store's in Doris; they do not make two writers safe,
// and they see nothing of labels Doris has forgotten
// (streaming_label_keep_max_second, 12 h; label_num_threshold, 2000
// finished per db) or never created (a checkpoint holding only
// dead-lettered records has no txn). So a file store cannot protect
// against:
//
//   - A restored copy started by a new process: the open writes a new
//     incarnation and takes the old state as the truth. The ranges decided
//     since the copy are loaded again under their labels; a label Doris
//     still holds committed stops the job (a fencing error), one it forgot
//     is loaded twice.
//   - Two machines (or two data directories) running the same config: each
//     has its own lock and incarnation. A decided txn of one can be aborted
//     by the other at begin (Label Already Exists on a label it announced:
//     it cannot tell its own interrupted attempt from another writer's),
//     and both read the same source ranges into their own labels.
//   - A deleted store once Doris forgot its labels: a new store starts from
//     the caller's first position and loads again what was loaded. The
//     loader refuses a new store beside a ledger holding evidence
//     (loader.ErrStoreReset), but not once the ledger is gone too.
//   - A source recreated under the same name (a Kafka topic deleted and
//     created again): the positions are opaque to the store, which cannot
//     tell that they belong to another log.
//
// The Kafka coordinator log (loader/kafka/coordlog) keeps the decisions in
// a compacted topic instead, each written in a Kafka transaction together
// with the consumer offsets it decides, and fences each incarnation of a
// writer by its transactional producer epoch: a second process of the same
// job bumps the epoch and the first one's writes fail (ErrFenced), and a
// lost, deleted or restored local directory does not hold the decisions.
package checkpoint
