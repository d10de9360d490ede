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
	var (
		res workerResult
		err error
	)
	switch s.Kind {
	case kindBaseline:
		res, err = runBaseline(ctx, s)
	case kindSink:
		res, err = runSink(ctx, s)
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
// optionally, a CPU profile.
type meter struct {
	t0   time.Time
	ms0  runtime.MemStats
	prof *os.File
}

func startMeter(profile string) (*meter, error) {
	m := &meter{}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		m.prof = f
	}
	runtime.ReadMemStats(&m.ms0)
	m.t0 = time.Now()
	return m, nil
}

// stop fills the timing and allocation fields of res.
func (m *meter) stop(res *workerResult) {
	res.Seconds = time.Since(m.t0).Seconds()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.Mallocs = ms.Mallocs - m.ms0.Mallocs
	res.AllocB = ms.TotalAlloc - m.ms0.TotalAlloc
	res.GoSysMB = float64(ms.Sys) / (1 << 20)
	res.PeakRSSMB = peakRSS()
	if m.prof != nil {
		pprof.StopCPUProfile()
		m.prof.Close()
		m.prof = nil
	}
}
