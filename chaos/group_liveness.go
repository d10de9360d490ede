package chaos

import (
	"errors"
	"fmt"
	"slices"
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

// faulted records the moment of a cycle's fault: what was produced then
// must be decided within LivenessBound; every member's failed-session
// count is the base of the structural check.
func (g *groupCampaign) faulted() {
	g.faultAt, g.faultRecords = time.Now(), g.records
	g.outOfGroup = map[*member]int{}
	for _, m := range g.live {
		g.outOfGroup[m] = m.p.Count(msgOutOfGroup)
	}
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
					"it was neither paused nor cut off by a broker restart (a join the coordinator never answered)", n, what)))
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
