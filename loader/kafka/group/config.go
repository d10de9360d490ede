package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Config is one member of a job's consumer group.
type Config struct {
	// Job is the job name: it names the slot topic (coordlog.SlotTopic),
	// the state topic and the slots' transactional ids. Required.
	Job string
	// Group is the job's consumer group: every member of the job joins
	// it. Required.
	Group string
	// Slots is the job's writer-slot count (the slot topic's partition
	// count), at least 1. With 1 the slot's owner is the job's one writer
	// and every other member a ready standby.
	Slots int
	// InstanceID is the member's static group.instance.id (KIP-345):
	// stable across restarts of the same member and unique among the
	// job's running members. Required.
	InstanceID string
	// InstanceFix is what the *GroupRefusedError of a member fenced by
	// another process of InstanceID (FENCED_INSTANCE_ID) tells the operator
	// to change ("": give each process its own instance id).
	InstanceFix string
	// LeaveOnStop: a member that stops by choice (Drain, a terminal
	// error, the end of Run's context) leaves the group by InstanceID, so
	// its slots move to another member at once. Without it they stay
	// reserved for a restart of the same InstanceID until SessionTimeout.
	// A killed member (Kill), a failpoint crash and a member fenced by
	// another process of its instance id never leave.
	LeaveOnStop bool
	// SessionTimeout and RebalanceTimeout are the group timeouts (0:
	// franz-go's defaults, 45 s and DefaultRebalanceTimeout). A revoked
	// slot's drain is bounded by RebalanceTimeout less a margin.
	SessionTimeout, RebalanceTimeout time.Duration
	// ClientOpts reach the brokers (seeds, TLS, SASL; kafka.ClientOpts of
	// a kafka.Config): every client of the member is built from them.
	// Required.
	ClientOpts []kgo.Opt
	// MemberOpts are extra options of the membership client only (tests:
	// kgo.HeartbeatInterval, kgo.ClientID).
	MemberOpts []kgo.Opt
	// Logger receives the member's logs; each slot's logger (Slot.Logger)
	// adds a "slot" attribute. nil: discarded.
	Logger *slog.Logger
	// SlotTopicCheck is how often the running member checks that the slot
	// topic still has Slots partitions (0: DefaultSlotTopicCheck).
	SlotTopicCheck time.Duration
	// NewSlotJob builds the job of one owned slot. Required.
	NewSlotJob SlotJobFactory
	// Hooks observe the member; every one is optional.
	Hooks Hooks
	// Kill, once closed, stops the member as kill -9 would (tests, chaos
	// runs): every slot job is cancelled at once and the membership client
	// closes without leaving the group, so the slots move after the
	// session timeout, or at once to a restart of the same InstanceID. Run
	// then returns ErrKilled. nil: never.
	Kill <-chan struct{}
}

// validate names the first missing or invalid field.
func (c *Config) validate() error {
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"Job", c.Job != ""}, {"Group", c.Group != ""}, {"InstanceID", c.InstanceID != ""},
		{"ClientOpts", len(c.ClientOpts) > 0}, {"NewSlotJob", c.NewSlotJob != nil},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("group: Config of job %q: %v required", c.Job, missing)
	}
	if c.Slots < 1 {
		return fmt.Errorf("group: Config of job %s: Slots %d, want at least 1", c.Job, c.Slots)
	}
	if c.SessionTimeout < 0 || c.RebalanceTimeout < 0 || c.SlotTopicCheck < 0 {
		return errors.New("group: Config of job " + c.Job + ": negative timeout or interval")
	}
	return nil
}

// Slot is one writer slot a member owns, as NewSlotJob receives it.
type Slot struct {
	// Index is the slot, in [0, Slots); Slots the job's slot count.
	Index, Slots int
	// Scope is the slot's writer scope (coordlog.SlotScope(Index)): the
	// checkpoint store's writer, the key of the slot's records in the
	// state topic.
	Scope string
	// Stamp is the membership check of the slot's decisions
	// (coordlog.Config.Stamp): it returns the member's id and generation
	// while the slot is in its current assignment, a *coordlog.NotOwnerError
	// otherwise. The slot job's coordinator log must use it, so that a
	// decision of a member that lost the slot is refused.
	Stamp func() (coordlog.GroupStamp, error)
	// Rebuilt counts the slot's rebuilds since it was assigned (0: the
	// first job).
	Rebuilt int
	// Logger is the member's logger with the slot's attribute.
	Logger *slog.Logger
}

// SlotJob is the running job of one slot: a *kafka.Connector over the
// slot's source partitions (kafka.Config.Slot, Slots) and a coordinator
// log stamped with Slot.Stamp satisfies it.
type SlotJob interface {
	// Run loads until the job drained (nil), ctx ended or it failed.
	Run(ctx context.Context) error
	// Drain asks Run to finish its open checkpoint and return; safe to
	// call from any goroutine, more than once.
	Drain()
}

// SlotJobFactory builds the job of slot. ctx ends when the slot is
// drained or cancelled before the job began loading (a build cut so
// returns the context's error and the member treats the slot as
// drained). An error is terminal to the member unless it wraps
// kafka.ErrNotOwner (the slot is suspended until the member rejoins) or
// *ledger.LockedError (another process of the job on this machine still
// holds the slot's ledger: retried with a backoff).
type SlotJobFactory func(ctx context.Context, slot Slot) (SlotJob, error)

// Hooks observe a member. They are called from the member's goroutines
// (rebalance callbacks, slot jobs), must not block for long, and must not
// call back into the Member except Ownership.
type Hooks struct {
	// Ready reports the member's readiness: true on every assignment (a
	// standby's empty one too), false when the member owns slots but runs
	// none of their jobs (every one suspended), lost its slots or its
	// group session failed.
	Ready func(ready bool)
	// GroupIn is called on every assignment of generation gen with the
	// slots owned then; GroupOut when the member went out of the group
	// (its session failed, or it lost its slots) at since, with the cause.
	GroupIn  func(gen int32, owned []int)
	GroupOut func(since time.Time, cause error)
	// SlotStarted is called when slot's job was built and before it runs.
	SlotStarted func(slot Slot, job SlotJob)
	// SlotStopped is called when slot's job ended with err (nil: drained);
	// job is nil when it was never built.
	SlotStopped func(slot int, job SlotJob, err error)
	// SlotReleased is called when the member no longer owns slot (revoked,
	// lost, or the member stopped): per-slot metrics can go.
	SlotReleased func(slot int)
	// Assigned and Revoked are called after the member took or handed over
	// slots (lost counts as revoked).
	Assigned, Revoked func(slots []int)
	// Revoking is called when the group revokes slots, before their jobs
	// drain.
	Revoking func(slots []int)
}

// setReady calls Hooks.Ready.
func (m *Member) setReady(ready bool) {
	if m.hooks.Ready != nil {
		m.hooks.Ready(ready)
	}
}
