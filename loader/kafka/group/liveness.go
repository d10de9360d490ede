package group

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Membership liveness (issue 29): a member out of the group (its group
// session failed: a join or sync that errored or timed out, an expired
// session) says so at WARN with the group state Kafka reports, keeps its
// readiness false and reports since when it is out (metrics: the process's
// group status) until an assignment arrives; franz-go keeps rejoining.

// describeTimeout bounds one DescribeGroups of the member's own group.
const describeTimeout = 5 * time.Second

// groupSeen is the job's consumer group as DescribeGroups answers it.
type groupSeen struct {
	// State is the group state (Stable, PreparingRebalance,
	// CompletingRebalance, Empty, Dead).
	State string
	// Members are the member ids; holders map a slot to the member
	// holding it (empty while the group rebalances).
	Members []string
	holders map[int]string
}

// String is the group for a log line: state and member count.
func (g groupSeen) String() string {
	return fmt.Sprintf("%s, %d member(s)", g.State, len(g.Members))
}

// describeGroup asks Kafka for the member's group.
func (m *Member) describeGroup(ctx context.Context, cl *kgo.Client) (groupSeen, error) {
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	dg, err := kadm.NewClient(cl).DescribeGroups(ctx, m.cfg.Group)
	if err == nil {
		err = dg.Error()
	}
	if err != nil {
		return groupSeen{}, fmt.Errorf("describe consumer group %s: %w", m.cfg.Group, err)
	}
	d := dg[m.cfg.Group]
	g := groupSeen{State: d.State, holders: map[int]string{}}
	for _, mem := range d.Members {
		g.Members = append(g.Members, mem.MemberID)
		if c, ok := mem.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				if t.Topic == m.topic {
					for _, p := range t.Partitions {
						g.holders[int(p)] = mem.MemberID
					}
				}
			}
		}
	}
	slices.Sort(g.Members)
	return g, nil
}

// sessionFailed handles an error of the membership client that ended its
// group session (*kgo.ErrGroupSession: a JoinGroup or SyncGroup that
// failed or timed out, a heartbeat refused): the member is out of the
// group until its next assignment.
func (m *Member) sessionFailed(ctx context.Context, cl *kgo.Client, err error) {
	now := time.Now()
	m.mu.Lock()
	if m.outSince.IsZero() {
		m.outSince = now
	}
	m.sessionFailures++
	since, failures := m.outSince, m.sessionFailures
	m.mu.Unlock()
	m.setReady(false)
	if m.hooks.GroupOut != nil {
		m.hooks.GroupOut(since, err)
	}
	state := "unknown"
	if g, derr := m.describeGroup(ctx, cl); derr != nil {
		state = "unknown (" + derr.Error() + ")"
	} else {
		state = g.String()
	}
	m.log.Warn("group mode: the member is not in the job's consumer group (its group session failed); it rejoins, "+
		"and is not ready and loads nothing new until the group assigns it slots again", "group", m.cfg.Group,
		"group_state", state, "out_for", now.Sub(since).Round(time.Millisecond).String(), "out_since", since.UTC().Format(time.RFC3339),
		"session_failures", failures, "rebalance_timeout", m.rebalanceTimeout().String(), "err", err)
}

// inGroup records an assignment of generation gen: the member is in the
// group again.
func (m *Member) inGroup(gen int32) {
	m.mu.Lock()
	since := m.outSince
	m.outSince = time.Time{}
	owned := make([]int, 0, len(m.owned))
	for s, own := range m.owned {
		if own {
			owned = append(owned, s)
		}
	}
	m.mu.Unlock()
	slices.Sort(owned)
	if !since.IsZero() {
		m.log.Info("group mode: the member is in the job's consumer group again", "generation", gen,
			"out_for", time.Since(since).Round(time.Millisecond).String(), "slots", owned)
	}
	if m.hooks.GroupIn != nil {
		m.hooks.GroupIn(gen, owned)
	}
}

// outOfGroup records that the member lost its slots without a hand-over
// (OnPartitionsLost): out of the group from now.
func (m *Member) outOfGroup(reason string) {
	m.mu.Lock()
	if m.outSince.IsZero() {
		m.outSince = time.Now()
	}
	since := m.outSince
	m.mu.Unlock()
	if m.hooks.GroupOut != nil {
		m.hooks.GroupOut(since, errors.New(reason))
	}
}

// slotTakenOver reports whether Kafka shows slot s held by another member,
// or this member out of the group (its session expired: a paused process
// resumed, a zombie): a fenced slot-log transaction is then the new
// owner's fencing of this member, not a second writer of the job.
func (m *Member) slotTakenOver(ctx context.Context, s int) (bool, string) {
	m.mu.Lock()
	cl := m.cl
	m.mu.Unlock()
	id, _ := cl.GroupMetadata()
	g, err := m.describeGroup(ctx, cl)
	if err != nil {
		return false, err.Error()
	}
	holder, held := g.holders[s]
	switch {
	case id == "" || !slices.Contains(g.Members, id):
		return true, "this member (" + cmp.Or(id, "no member id") + ") is not in the group (" + g.String() + ")"
	case held && holder != id:
		return true, "member " + holder + " holds the slot now"
	}
	return false, "this member " + id + " holds the slot (" + g.String() + "; holders " + fmt.Sprint(g.holders) + ")"
}
