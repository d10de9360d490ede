package loader

import (
	"time"
)

// DefaultSubLoadsMax is the default Config.SubLoadsMax.
const DefaultSubLoadsMax = 8

// Thresholds of the K controller (autoK.next).
const (
	// autoRaiseBlocked: the writer waited on the table's Stream Loads for
	// at least this share of the checkpoint, so the loads, not the source
	// or the sink's CPU, bound it. One writer feeds all K loads, so the
	// share it waits is about 1 − carried/offered: at 0.25 doubling K can
	// still raise the checkpoint's rate by up to 1/(1−0.25) = 1.33×; a
	// "most of the checkpoint" (0.5) bound would stop at half the rate
	// the source offers.
	autoRaiseBlocked = 0.25
	// autoLowerUse: K is halved when K/2 sub-loads at the per-load rate
	// measured when they were the bottleneck would be at most this busy.
	// Below autoRaiseBlocked, so the halved K is not raised again at once.
	autoLowerUse = 0.4
)

// loadMeasure is what one checkpoint's loads of one table measured: the
// body bytes handed to Doris, the time the writer was blocked handing
// them over (a full buffer waits until the BE took it), and the
// checkpoint's wall time from its start to its barrier.
type loadMeasure struct {
	bytes   int64
	blocked time.Duration
	wall    time.Duration
}

// autoK chooses a table's sub-load count K from measured throughput
// (Config.SubLoadsAuto, doris.sub_loads: auto). It starts at min and
// changes only between checkpoints (the decision records each
// checkpoint's K, so recovery and heals use the K the checkpoint had).
//
// The rule: when the writer was blocked on the table's loads for at
// least autoRaiseBlocked of the checkpoint, the loads are the bottleneck:
// K doubles (up to max), and the per-sub-load rate bytes/wall/K is kept as
// the estimate of one load's capacity. When they were not, and K/2 loads
// at that capacity would be at most autoLowerUse busy carrying the
// checkpoint's rate, K halves (down to min). Without a capacity estimate
// (the loads never were the bottleneck) K stays where it is. A checkpoint
// without a row of the table, or without a measurable wall time (a
// stopped clock), changes nothing.
type autoK struct {
	k, min, max int
	// perLoad is the estimated capacity of one sub-load, bytes/s; 0 until
	// the loads were once the bottleneck.
	perLoad float64
}

// next returns K for the next checkpoint after measure m of this one.
func (a *autoK) next(m loadMeasure) int {
	if m.bytes <= 0 || m.wall <= 0 {
		return a.k
	}
	rate := float64(m.bytes) / m.wall.Seconds()
	if float64(m.blocked) >= autoRaiseBlocked*float64(m.wall) {
		a.perLoad = rate / float64(a.k)
		a.k = min(2*a.k, a.max)
		return a.k
	}
	if half := a.k / 2; half >= a.min && a.perLoad > 0 && rate <= autoLowerUse*float64(half)*a.perLoad {
		a.k = half
	}
	return a.k
}

// measureLoads returns, per table with Config.SubLoadsAuto, what a's
// loads measured up to now (the barrier): bytes handed to Doris, time
// blocked handing them, and a's wall time.
func (l *Loader) measureLoads(a *attempt) map[*tableTarget]loadMeasure {
	var out map[*tableTarget]loadMeasure
	if a.started.IsZero() {
		return nil
	}
	wall := l.clock.Now().Sub(a.started)
	for _, tl := range a.loads {
		if tl.tt.auto == nil || tl.s == nil {
			continue
		}
		if out == nil {
			out = map[*tableTarget]loadMeasure{}
		}
		m := out[tl.tt]
		m.bytes += tl.s.pw.handed.Load() + int64(len(tl.s.buf))
		m.blocked += tl.s.blocked
		m.wall = wall
		out[tl.tt] = m
	}
	return out
}

// adjustSubLoads sets each measured table's K for the next checkpoint
// (autoK.next) once a's decision is durable; a changed K is logged.
func (l *Loader) adjustSubLoads(a *attempt, measured map[*tableTarget]loadMeasure) {
	for tt, m := range measured {
		from := tt.auto.k
		if f := l.knobs.MeasureSubLoads; f != nil {
			km := f(a.id, tt.name, from, SubLoadsMeasure{Bytes: m.bytes, Blocked: m.blocked, Wall: m.wall})
			m = loadMeasure{bytes: km.Bytes, blocked: km.Blocked, wall: km.Wall}
		}
		to := tt.auto.next(m)
		if to == from {
			continue
		}
		tt.subs.Store(int32(to))
		l.log.Info("sub-loads: K changed for the next checkpoint (doris.sub_loads: auto)", "table", tt.name,
			"from", from, "to", to, "after_checkpoint", a.id, "mb_per_s", float64(m.bytes)/1e6/m.wall.Seconds(),
			"mb_per_s_per_sub_load", float64(m.bytes)/1e6/m.wall.Seconds()/float64(from),
			"blocked_share", m.blocked.Seconds()/m.wall.Seconds())
	}
}
