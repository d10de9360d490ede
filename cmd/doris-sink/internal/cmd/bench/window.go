package bench

import "time"

// Steady-state window: the fraction of a case's value bytes consumed at
// which the child samples its CPU time and the wall clock, the same edges
// for every kind of child (docs/performance.md "Steady state").
const (
	windowFrom = 0.10
	windowTo   = 0.90
)

// window is what a child samples at the two edges of the steady-state
// window: the first observation at or past windowFrom of the case's bytes
// and the first at or past windowTo. Observations are made after each
// poll's records were handled (baseline: counted; sink: handed to the
// loader; limit: written to the socket), so an edge lies up to one poll
// past its nominal fraction: the figures use the bytes and records
// actually consumed between the samples, never the nominal 80 %.
type window struct {
	StartUnixNS  int64 `json:"start_unix_ns"`
	EndUnixNS    int64 `json:"end_unix_ns"`
	StartCPUNS   int64 `json:"start_cpu_ns"`
	EndCPUNS     int64 `json:"end_cpu_ns"`
	StartBytes   int64 `json:"start_bytes"`
	EndBytes     int64 `json:"end_bytes"`
	StartRecords int64 `json:"start_records"`
	EndRecords   int64 `json:"end_records"`
}

// valid says whether the window spans at least one poll: a case so small
// that one poll crosses both edges has none, and its figures fall back to
// the whole run (Result.MeasuredOver).
func (w *window) valid() bool {
	return w != nil && w.EndBytes > w.StartBytes && w.EndRecords > w.StartRecords &&
		w.EndUnixNS > w.StartUnixNS && w.EndCPUNS >= w.StartCPUNS
}

// Seconds, CPUSeconds, Bytes and Records are the window's spans.
func (w *window) Seconds() float64    { return float64(w.EndUnixNS-w.StartUnixNS) / 1e9 }
func (w *window) CPUSeconds() float64 { return float64(w.EndCPUNS-w.StartCPUNS) / 1e9 }
func (w *window) Bytes() int64        { return w.EndBytes - w.StartBytes }
func (w *window) Records() int64      { return w.EndRecords - w.StartRecords }

// windowProbe places the two edges of a window over total bytes as a child
// consumes them. It is not safe for concurrent use: each child calls
// observe from the goroutine that polls.
type windowProbe struct {
	from, to int64
	w        window
	edges    int // samples taken: 0, 1 (start) or 2 (end)
	// now and cpu read the clock and this process's CPU time (tests
	// replace them).
	now func() time.Time
	cpu func() time.Duration
	// onStart and onEnd, when set, run right after each edge's sample
	// (the worker's CPU profile covers the window).
	onStart, onEnd func()
}

// newWindowProbe returns a probe for a case of total value bytes (nil, a
// probe that never samples, for 0).
func newWindowProbe(total int64) *windowProbe {
	if total <= 0 {
		return nil
	}
	return &windowProbe{
		from: int64(float64(total) * windowFrom), to: int64(float64(total) * windowTo),
		now: time.Now, cpu: selfCPU,
	}
}

// observe is called after each poll with the bytes and records consumed so
// far; it samples an edge when the bytes reach it. One observation takes at
// most one sample: a poll that crosses both edges starts the window, and
// the next observation ends it.
func (p *windowProbe) observe(bytes, records int64) {
	if p == nil || p.edges == 2 {
		return
	}
	edge := p.from
	if p.edges == 1 {
		edge = p.to
	}
	if bytes < edge {
		return
	}
	t, c := p.now().UnixNano(), p.cpu().Nanoseconds()
	p.edges++
	if p.edges == 1 {
		p.w.StartUnixNS, p.w.StartCPUNS, p.w.StartBytes, p.w.StartRecords = t, c, bytes, records
		if p.onStart != nil {
			p.onStart()
		}
		return
	}
	p.w.EndUnixNS, p.w.EndCPUNS, p.w.EndBytes, p.w.EndRecords = t, c, bytes, records
	if p.onEnd != nil {
		p.onEnd()
	}
}

// result returns the sampled window, or nil when the end edge was never
// reached.
func (p *windowProbe) result() *window {
	if p == nil || p.edges < 2 {
		return nil
	}
	w := p.w
	return &w
}
