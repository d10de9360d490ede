package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"time"
)

// Progress logs the periodic info line of `doris-sink run`
// (metrics.log_interval): per job, its state, rows/s and bytes/s handed to
// the loader since the previous line, the lag to the loaded position
// (summed over partitions), and the last decided checkpoint with its age.
// A running job logs at INFO, a stalled or recovering one at WARN.
type Progress struct {
	m    *Metrics
	log  *slog.Logger
	at   time.Time
	prev map[string]progressCounts // by table
}

type progressCounts struct{ rows, bytes int64 }

// NewProgress returns a Progress whose first line measures rates from
// start.
func (m *Metrics) NewProgress(log *slog.Logger, start time.Time) *Progress {
	p := &Progress{m: m, log: log, at: start, prev: map[string]progressCounts{}}
	for _, j := range m.snapshotJobs() {
		if j.km != nil {
			p.prev[j.table] = progressCounts{j.km.Rows.Load(), j.km.RowBytes.Load()}
		}
	}
	return p
}

// Run logs one line per job on every tick until ctx ends. Tests pass
// their own tick channel; `run` passes a time.Ticker's.
func (p *Progress) Run(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticks:
			p.Report(ctx, now)
		}
	}
}

// Report logs the lines for now.
func (p *Progress) Report(ctx context.Context, now time.Time) {
	st := p.m.Status()
	secs := now.Sub(p.at).Seconds()
	p.at = now
	type line struct {
		key  string // the table, then " slot <n>" in group mode
		slot *int
		job  JobStatus
	}
	var lines []line
	for _, j := range st.Jobs {
		lines = append(lines, line{key: j.Table, job: j})
	}
	if g := st.Group; g != nil {
		for _, s := range g.Owned {
			if s.Job != nil {
				lines = append(lines, line{key: s.Job.Table + " slot " + strconv.Itoa(s.Slot), slot: &s.Slot, job: *s.Job})
			}
		}
	}
	for _, l := range lines {
		j := l.job
		cur := progressCounts{j.RowsWritten, j.RowBytes}
		prev := p.prev[l.key] // a slot job rebuilt starts its counts again: a negative rate reads as 0
		p.prev[l.key] = cur
		rate := func(d int64) float64 {
			if secs <= 0 || d < 0 {
				return 0
			}
			return float64(d) / secs
		}
		var lag int64
		lagKnown := false
		for _, ps := range j.Partitions {
			if ps.Lag != nil {
				lag += *ps.Lag
				lagKnown = true
			}
		}
		attrs := []slog.Attr{
			slog.String("job", j.Job), slog.String("table", j.Table), slog.String("state", j.State),
		}
		if l.slot != nil {
			attrs = append(attrs, slog.Int("slot", *l.slot))
		}
		attrs = append(attrs,
			slog.Float64("rows_per_s", round1(rate(cur.rows-prev.rows))),
			slog.Float64("bytes_per_s", round1(rate(cur.bytes-prev.bytes))),
		)
		if lagKnown {
			attrs = append(attrs, slog.Int64("lag", lag))
		} else {
			attrs = append(attrs, slog.String("lag", "unknown"))
		}
		if c := j.LastCheckpoint; c != nil {
			attrs = append(attrs, slog.Uint64("checkpoint", c.ID),
				slog.Duration("checkpoint_age", now.Sub(c.DecidedAt).Round(time.Second)))
		} else {
			attrs = append(attrs, slog.String("checkpoint", "none"))
		}
		level := slog.LevelInfo
		if s := j.Stall; s != nil {
			level = slog.LevelWarn
			attrs = append(attrs, slog.String("reason", s.Reason),
				slog.Duration("stalled_for", now.Sub(s.Since).Round(time.Second)), slog.Bool("fatal", s.Fatal))
		} else if j.State == StateRecovering {
			level = slog.LevelWarn
		}
		p.log.LogAttrs(ctx, level, "progress", attrs...)
	}
}

// round1 rounds to one decimal.
func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
