// Package group runs a process as one member of a doris-sink job's
// consumer group: the group shares the job's writer slots among its
// members, and each member runs one slot job (a kafka.Connector over the
// slot's partitions and a coordlog store of the slot's scope) per slot it
// owns. `doris-sink run` is a thin shell over this package; a Go service
// can be a member of the same job with its own record handling (its own
// kafka.Connector options), next to CLI members or alone. See
// docs/design.md §7.2 for the protocol and its tests.
//
// # Slots
//
// A job has Config.Slots writer slots. Source partition p of topic t
// belongs to slot coordlog.SlotOf(t, p, Slots). Each slot is one writer
// chain, exactly like a standalone writer (docs/design.md §7.1): state
// record key "<job>/<slot>", transactional id coordlog.TransactionalID,
// label scope coordlog.SlotScope(slot). Slot 0 is the standalone scope, so
// a job of one slot is byte for byte the standalone job. The slot count is
// fixed per job; changing it re-maps partitions (`doris-sink checkpoint
// reslot`).
//
// The slot topic coordlog.SlotTopic(job) has one partition per slot and
// holds no records: the group's cooperative-sticky assignment of its
// partitions is the assignment of slots to members. Run creates it (or
// checks its partition count, *SlotTopicError) before it joins; a running
// member checks it every Config.SlotTopicCheck and stops with a
// *SlotTopicError when it was deleted or resized under the job.
//
// # Slot jobs
//
// For each owned slot the member calls Config.NewSlotJob with a Slot and
// runs the returned SlotJob until the slot is revoked, lost, or the member
// stops. A slot job must read only its slot's partitions
// (kafka.WithPartitionFilter with coordlog.SlotOf) and open
// its coordinator log with the slot's scope and Slot.Stamp
// (coordlog.Config.Stamp), so that a decision names only its own
// partitions and is stamped with the member's generation. Where the slot
// keeps local state (its ledger) is the factory's choice; SlotDataDir is
// doris-sink's rule.
//
// # Stamps
//
// Slot.Stamp is called by the slot's coordinator log right before a
// decision transaction begins: it refuses (*coordlog.NotOwnerError,
// wrapping kafka.ErrNotOwner) unless the slot is in the member's current
// assignment, and otherwise returns the member id, generation and instance
// id of that moment, which stamp the transactional offset commit. The
// group coordinator refuses a stamp the group has moved past
// (*coordlog.GenerationError): a member that lost a slot can never decide
// for it.
//
// # Revoke, lost and drains
//
// A revoked slot (a cooperative hand-over: only the slots that move) is
// drained: its job finishes its open checkpoint, bounded by
// Config.RebalanceTimeout less min(5 s, a quarter of it), one deadline for
// every revoked slot; a job still draining then is cancelled, its open
// checkpoint left undecided for the next owner, which aborts it. A lost
// slot (the session expired, the member was fenced out) is cancelled at
// once. Member.Drain drains every slot, all within one
// Config.RebalanceTimeout, and only then leaves the group (Config.LeaveOnStop),
// so its slots move once every job ended; a drain cut at that bound makes
// Run return *DrainCutError.
//
// # Suspension and rebuilds
//
// A slot job that ends on a refused decision (kafka.ErrNotOwner), or
// whose log was fenced while Kafka shows the slot held by another member
// or this member out of the group (a zombie), is never rebuilt from the
// member's local view: the slot is suspended and rebuilt only once an
// assignment of a newer generation includes it (franz-go calls the
// assignment callback on every generation). Rebuilds wait 0.5 s·2^(n−1),
// at most 30 s. While every owned slot is suspended the member is not
// ready (Hooks.Ready). Any other error of a slot job is terminal: the
// member drains its other slots and Run returns it, naming the slot, the
// state topic and the transactional id. A *ledger.LockedError from
// NewSlotJob (a former owner on this machine still holds the slot's
// ledger) is retried while the slot is owned.
//
// # Static membership
//
// Every member joins with Config.InstanceID as its group.instance.id
// (KIP-345): a restart with the same id replaces the dead member at once
// instead of waiting out its session. A member that stops by choice leaves
// the group by instance id when Config.LeaveOnStop is set, so its slots
// move at once; a killed member (Config.Kill, kill -9) leaves them reserved
// for its restart until Config.SessionTimeout. Two running processes with
// one instance id fence each other (FENCED_INSTANCE_ID): the fenced one
// ends with a *GroupRefusedError saying Config.InstanceFix. Other
// membership errors retrying cannot fix (a session timeout outside the
// broker's bounds, missing ACLs, a group shared with other consumers) end
// the member with a *GroupRefusedError too, instead of idling outside the
// group; the rest are retried by the client. A member out of the group
// (a failed group session) reports it through Hooks.GroupOut and
// Hooks.Ready until its next assignment (Hooks.GroupIn).
//
// # Standby
//
// Members beyond the slot count own no slot: they are hot standbys, ready
// (Hooks.Ready(true) on their empty assignment) and taking a slot over when
// its owner leaves (at once) or dies (after its session timeout). With
// Slots 1 the slot's owner is the job's one writer and every other member
// a standby.
//
// # Observing a member
//
// Member.Ownership returns the slots owned now and the member id and
// generation; Hooks report readiness, membership, slot jobs started,
// stopped and released, and assignments. The package has no metrics of its
// own: doris-sink's CLI turns these into its Prometheus series. ReadView
// builds the operator view of the whole job (every slot's owner, position
// and lag) from DescribeGroups and what the state topic records; it never
// joins the group.
//
// # Errors
//
// The terminal errors (*SlotTopicError, *GroupRefusedError,
// *DrainCutError) say what to change in doris-sink's configuration keys,
// which CLI and library members of one job share: kafka.group is
// Config.Group, kafka.session_timeout SessionTimeout,
// kafka.rebalance_timeout RebalanceTimeout, job.slots Slots, job.instance
// InstanceID.
//
// # Testing with kfake
//
// kfake expires a member whose JoinGroup or SyncGroup waits in purgatory
// at its session timeout, which Kafka never does; with every member in
// that state nothing loads for minutes. Apply
// kafkatest.KeepParkedMembers to a kfake cluster that group members use,
// right after creating it. The Example shows a member over kfake and the
// Doris emulator (doris/doristest); examples/groupmember is a runnable
// service.
package group
