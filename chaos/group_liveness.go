package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Liveness (issue 29): after the last fault of a cycle the group must
// decide every record produced before it within LivenessBound (the
// session timeout that detects a dead or paused member, plus the
// rebalance timeout that bounds the round that moves its slots, plus
// GroupConfig.LivenessMargin for the slot jobs to start and decide); and
// no member that was neither paused nor cut off by a broker restart may
// see its group session fail (a JoinGroup or SyncGroup the coordinator
// did not answer: the stall of issue 29).

// msgOutOfGroup is a member's line for a failed group session.
const msgOutOfGroup = "group mode: the member is not in the job's consumer group"

// LivenessBound is the longest a group campaign allows between a cycle's
// last fault and the group deciding every record produced before it.
func (c GroupConfig) LivenessBound() time.Duration {
	return c.SessionTimeout + c.RebalanceTimeout + c.LivenessMargin
}

// livenessProbe is how many events faulted produces right after a fault:
// the rows that must advance within LivenessBound.
const livenessProbe = 12

// faulted records the moment of a cycle's fault and produces
// livenessProbe events right after it: they, and everything produced
// before, must be decided within LivenessBound; every live member's
// failed-session count is the base of the structural check.
func (g *groupCampaign) faulted(ctx context.Context) error {
	g.faultAt = time.Now()
	g.outOfGroup = map[*member]int{}
	for _, m := range g.live {
		g.outOfGroup[m] = m.p.Count(msgOutOfGroup)
	}
	err := g.produce(ctx, livenessProbe)
	g.faultRecords = g.records
	return err
}

// checkLiveness checks the cycle's last fault (what names the step) once
// the group settled; it records the figures and returns the violation.
func (g *groupCampaign) checkLiveness(what string, brokerRestart bool) error {
	if g.faultAt.IsZero() {
		return nil
	}
	at, target := g.faultAt, g.faultRecords
	g.faultAt = time.Time{}
	var errs []error
	if !brokerRestart {
		for m, before := range g.outOfGroup {
			if m.zombie || !slices.Contains(g.live, m) {
				continue
			}
			if n := m.p.Count(msgOutOfGroup) - before; n > 0 {
				g.res.SessionFailures += n
				errs = append(errs, g.memberErr(m, "liveness", fmt.Errorf("%d failed group session(s) after %s although "+
					"it was neither paused nor cut off by a broker restart (a JoinGroup or SyncGroup that failed or timed out, or a "+
					"session the group ended: the line names the error)", n, what)))
			}
		}
	}
	took, ok := g.reached(at, target)
	if !ok {
		return errors.Join(errs...)
	}
	g.res.LivenessMax = max(g.res.LivenessMax, took)
	if bound := g.cfg.LivenessBound(); took > bound {
		g.res.LivenessViolations++
		errs = append(errs, fmt.Errorf("liveness: %d records produced before %s were decided only %v after it, past the bound "+
			"%v (session_timeout %v + rebalance_timeout %v + margin %v)", target, what, took.Round(10*time.Millisecond), bound,
			g.cfg.SessionTimeout, g.cfg.RebalanceTimeout, g.cfg.LivenessMargin))
	}
	return errors.Join(errs...)
}

// reached returns how long after at the group's decisions (per partition
// the highest end any member logged) first covered target records; false
// when no decision after at did (everything was decided before).
func (g *groupCampaign) reached(at time.Time, target int64) (time.Duration, bool) {
	var ds []Decision
	for _, m := range g.all {
		ds = append(ds, m.p.DecisionsSince(0)...)
	}
	slices.SortStableFunc(ds, func(a, b Decision) int { return a.At.Compare(b.At) })
	per := map[string]int64{}
	sum := func() int64 {
		var n int64
		for _, v := range per {
			n += v
		}
		return n
	}
	for _, d := range ds {
		for k, v := range d.End {
			per[k] = max(per[k], v)
		}
		if sum() >= target {
			if !d.At.After(at) {
				return 0, false
			}
			return d.At.Sub(at), true
		}
	}
	return 0, false
}

// zombieInRebalance runs MemberZombieInRebalance on v: a rebalance starts
// (a member joins, or one leaves at MaxMembers) while v's group requests
// are held; once every other member waited in its JoinGroup past the
// session timeout, v is SIGSTOPped, then handled as a zombie. Kafka keeps
// the waiting members (a member with a request in purgatory is never
// expired) and completes the round when v's session expires; a
// coordinator that expires them leaves them without an answer until
// their request timeout (the stall of issue 29). Without a member id of v
// or of another member (none logged yet) it is a plain zombie.
func (g *groupCampaign) zombieInRebalance(ctx context.Context, v *member) error {
	id := v.p.MemberID()
	var others []string
	for _, m := range g.live {
		if m != v && m.p.MemberID() != "" {
			others = append(others, m.p.MemberID())
		}
	}
	if id == "" || len(others) == 0 {
		return g.zombie(ctx, v)
	}
	var mu sync.Mutex
	joined := map[string]bool{}
	wake := make(chan struct{}, 1)
	stopKeep, release := g.c.HoldMember(groupJob, id, func(member string) {
		mu.Lock()
		joined[member] = true
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer release()
	if len(g.live) < g.cfg.MaxMembers {
		if _, err := g.startMember(); err != nil {
			return err
		}
	} else {
		var k *member
		for _, m := range g.live {
			if m != v {
				k = m
			}
		}
		if err := g.remove(ctx, k); err != nil {
			return err
		}
		others = slices.DeleteFunc(others, func(s string) bool { return s == k.p.MemberID() })
	}
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	for {
		mu.Lock()
		all := true
		for _, o := range others {
			all = all && joined[o]
		}
		mu.Unlock()
		if all {
			break
		}
		select {
		case <-wake:
		case <-wctx.Done():
			return fmt.Errorf("%s: the other members %v did not rejoin while member %d was held: %w", MemberZombieInRebalance,
				others, v.id, wctx.Err())
		}
	}
	// The others now wait for v in their JoinGroup; v keeps its session
	// (heartbeats on its behalf) past their session timeout, then freezes.
	sleep(ctx, g.cfg.SessionTimeout+time.Second) // the length of the fault, not a synchronisation
	v.p.Pause()
	stopKeep()
	g.cfg.Logf("seed=%d member %d (%s) frozen while %d member(s) waited for it in a rebalance", g.cfg.Seed, v.id, id, len(others))
	return g.paused(ctx, v, release)
}
