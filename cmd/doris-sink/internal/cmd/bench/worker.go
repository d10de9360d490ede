package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

// WorkerEnv, set to "1", makes a test binary act as a bench worker (see
// RunWorker); `doris-sink bench worker` is the command-line entry.
const WorkerEnv = "DORIS_SINK_BENCH_WORKER"

// RunWorker is a bench child process: it reads one spec (JSON) from in,
// measures it and writes the result as the last JSON line to out. Peak
// RSS and CPU time are read by the parent from the child's rusage; the
// allocation counts come from runtime.MemStats here.
func RunWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	var s spec
	if err := json.NewDecoder(in).Decode(&s); err != nil {
		return fmt.Errorf("bench worker: read spec: %w", err)
	}
	w := &lineWriter{w: out}
	var pinned []int
	if len(s.PinCPUs) > 0 {
		if err := pinProcess(s.PinCPUs); err != nil {
			return fmt.Errorf("bench worker %s: %w", s.Kind, err)
		}
		var err error
		if pinned, err = allowedCPUs(); err != nil {
			return fmt.Errorf("bench worker %s: %w", s.Kind, err)
		}
	}
	var (
		res workerResult
		err error
	)
	switch s.Kind {
	case kindBaseline:
		res, err = runBaseline(ctx, s)
	case kindSink:
		res, err = runSink(ctx, s)
	case kindLimit:
		res, err = runLimit(ctx, s)
	case kindLatency:
		res, err = runLatency(ctx, s)
	case kindVictim:
		res, err = runVictim(ctx, s, w)
	case kindRecover:
		res, err = runRecover(ctx, s)
	case kindMemory:
		res, err = runMemory(ctx, s)
	default:
		err = fmt.Errorf("unknown kind %q", s.Kind)
	}
	if err != nil {
		return fmt.Errorf("bench worker %s: %w", s.Kind, err)
	}
	res.PinnedCPUs = pinned
	return w.write(res)
}

// lineWriter writes JSON lines; safe for concurrent use.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.w.Write(append(b, '\n'))
	return err
}

// meter measures a worker's phase: wall time, heap allocations and,
// optionally, a CPU profile. With a steady-state window the profile covers
// the window only (startProfile and stopProfile at its edges); without one,
// the whole phase.
type meter struct {
	t0      time.Time
	ms0     runtime.MemStats
	profile string
	file    *os.File // created before the phase, so a bad path fails the case
	prof    *os.File // the file while the profile runs
	err     error    // the window's profile did not start
}

func startMeter(profile string) (*meter, error) {
	m := &meter{profile: profile}
	runtime.ReadMemStats(&m.ms0)
	m.t0 = time.Now()
	return m, nil
}

// startProfile starts the CPU profile, if one was asked for and it is not
// running yet.
func (m *meter) startProfile() error {
	if m.profile == "" || m.prof != nil {
		return nil
	}
	if err := m.createProfile(); err != nil {
		return err
	}
	f := m.file
	m.file = nil
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile %s: %w", m.profile, err)
	}
	m.prof = f
	return nil
}

// createProfile creates the profile's file, if one was asked for and it
// is not created yet.
func (m *meter) createProfile() error {
	if m.profile == "" || m.file != nil {
		return nil
	}
	f, err := os.Create(m.profile)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	m.file = f
	return nil
}

// stopProfile ends a running CPU profile; the profile is written when it
// ends, so a profile is never left half-written.
func (m *meter) stopProfile() {
	if m.prof != nil {
		pprof.StopCPUProfile()
		m.prof.Close()
		m.prof = nil
		m.profile = "" // one profile per phase
	}
	if m.file != nil { // the window never opened: leave no empty profile
		m.file.Close()
		os.Remove(m.file.Name())
		m.file = nil
	}
}

// watch hooks the profile to probe's edges (or starts it now when the case
// has no window). The file is created now either way, so a path that
// cannot be written fails the case before it runs instead of leaving it
// without a profile.
func (m *meter) watch(p *windowProbe) error {
	if p == nil {
		return m.startProfile()
	}
	if err := m.createProfile(); err != nil {
		return err
	}
	p.onStart, p.onEnd = m.startWindowProfile, m.stopProfile
	return nil
}

// startWindowProfile starts the profile at the window's first edge. Its
// file is already open, so what can fail here is pprof itself (a profile
// already running in this process); stop returns that error.
func (m *meter) startWindowProfile() {
	if err := m.startProfile(); err != nil && m.err == nil {
		m.err = err
	}
}

// stop fills the timing and allocation fields of res and ends the
// profile; its error is the profile's, which fails the case (a profile
// asked for is never silently missing).
func (m *meter) stop(res *workerResult) error {
	res.Seconds = time.Since(m.t0).Seconds()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.Mallocs = ms.Mallocs - m.ms0.Mallocs
	res.AllocB = ms.TotalAlloc - m.ms0.TotalAlloc
	res.GoSysMB = float64(ms.Sys) / (1 << 20)
	res.PeakRSSMB = peakRSS()
	m.stopProfile()
	return m.err
}
