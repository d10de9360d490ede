package bench

import (
	"math"
	"testing"
	"time"
)

// fakeProbe is a probe over total bytes whose clock and CPU advance by
// one second and 0.5 s per observation.
func fakeProbe(total int64) *windowProbe {
	p := newWindowProbe(total)
	var n int64
	p.now = func() time.Time { n++; return time.Unix(100+n, 0) }
	p.cpu = func() time.Duration { return time.Duration(n) * 500 * time.Millisecond }
	return p
}

// The edges are the first observations at or past 10 % and 90 % of the
// bytes; the window's spans are what was consumed between them, not the
// nominal 80 %.
func TestWindowProbeEdges(t *testing.T) {
	t.Parallel()
	p := fakeProbe(1000)
	var starts, ends int
	p.onStart, p.onEnd = func() { starts++ }, func() { ends++ }
	for _, b := range []int64{50, 150, 400, 850, 950, 1000} {
		p.observe(b, b/10)
	}
	w := p.result()
	if !w.valid() {
		t.Fatalf("window %+v: want valid", w)
	}
	if w.StartBytes != 150 || w.EndBytes != 950 || w.Bytes() != 800 || w.Records() != 80 {
		t.Fatalf("window %+v: want bytes 150 → 950, records 15 → 95", w)
	}
	// Samples 1 and 2 were taken at the 2nd and 5th observation: the fake
	// clock read once per sample.
	if w.Seconds() != 1 || math.Abs(w.CPUSeconds()-0.5) > 1e-9 {
		t.Fatalf("window %v s, %v cpu-s; want 1 and 0.5", w.Seconds(), w.CPUSeconds())
	}
	if starts != 1 || ends != 1 {
		t.Fatalf("onStart ran %d times, onEnd %d: want once each", starts, ends)
	}
}

// A poll that crosses both edges only starts the window; a case whose last
// poll does has none (result nil: the figures fall back to the whole run),
// and a case of 0 bytes never samples.
func TestWindowProbeDegenerate(t *testing.T) {
	t.Parallel()
	p := fakeProbe(1000)
	p.observe(1000, 10)
	if w := p.result(); w != nil || w.valid() {
		t.Fatalf("one poll for everything: window %+v, want none", w)
	}
	p.observe(1000, 10)
	if w := p.result(); w == nil || w.valid() {
		t.Fatalf("no bytes between the edges: window %+v, want sampled but not valid", w)
	}
	var none *windowProbe = newWindowProbe(0)
	none.observe(10, 1)
	if none != nil || none.result() != nil {
		t.Fatal("a probe of 0 bytes sampled")
	}
}

// fill takes the rates over the window when the child sampled one, keeps
// the whole run's in run_*, and the fixed costs from the child's clocks.
func TestFillUsesTheWindow(t *testing.T) {
	t.Parallel()
	start := time.Unix(1000, 0)
	m := measured{started: start, cpu: 4 * time.Second, res: workerResult{
		Records: 1000, Bytes: 1e9, Seconds: 10,
		Window: &window{StartUnixNS: start.Add(2 * time.Second).UnixNano(), EndUnixNS: start.Add(6 * time.Second).UnixNano(),
			StartCPUNS: 1e9, EndCPUNS: 3e9, StartBytes: 1e8, EndBytes: 9e8, StartRecords: 100, EndRecords: 900},
		FirstRecord: start.Add(300 * time.Millisecond).UnixNano(), FirstBegin: start.Add(400 * time.Millisecond).UnixNano(),
		LastByte: start.Add(9 * time.Second).UnixNano(), Done: start.Add(9500 * time.Millisecond).UnixNano(),
		RecoverStart: 5, RecoverEnd: 5 + 2e6, PinnedCPUs: []int{1},
	}}
	var r Result
	r.fill(m)
	if r.MeasuredOver != "window" || r.RecordsPerS != 200 || r.MBPerS != 200 || r.CPUSecondsPerGB != 2.5 {
		t.Fatalf("steady %s: %v rec/s, %v MB/s, %v cpu-s/GB; want window, 200, 200, 2.5", r.MeasuredOver, r.RecordsPerS, r.MBPerS, r.CPUSecondsPerGB)
	}
	if r.RunRecordsPerS != 100 || r.RunMBPerS != 100 || r.RunCPUSecondsPerGB != 4 || r.CPUSeconds != 4 {
		t.Fatalf("whole run %v rec/s, %v MB/s, %v cpu-s/GB: want 100, 100, 4", r.RunRecordsPerS, r.RunMBPerS, r.RunCPUSecondsPerGB)
	}
	if r.ExecToFirstRecordMS != 300 || r.ExecToFirstBeginMS != 400 || r.CommitTailMS != 500 || r.RecoverCallMS != 2 {
		t.Fatalf("fixed costs %v %v %v %v ms: want 300, 400, 500, 2", r.ExecToFirstRecordMS, r.ExecToFirstBeginMS, r.CommitTailMS, r.RecoverCallMS)
	}
	if !r.Pinned || len(r.PinChildCPUs) != 1 {
		t.Fatalf("pinned %v %v", r.Pinned, r.PinChildCPUs)
	}
	m.res.Window = nil
	r = Result{}
	r.fill(m)
	if r.MeasuredOver != "whole-run" || r.RecordsPerS != 100 || r.CPUSecondsPerGB != 4 {
		t.Fatalf("no window: %s %v rec/s %v cpu-s/GB, want whole-run figures", r.MeasuredOver, r.RecordsPerS, r.CPUSecondsPerGB)
	}
}
