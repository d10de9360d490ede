package bench

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"

	"github.com/doris-sink/doris-sink/doris/doristest"
)

// runParallel runs the parallel-load family (plan.Parallel): per round the
// bare consumer and the sink at each K on one seeded topic, into the
// parallel emulator; the median round by records/s is kept, with min/max,
// and each K's MB/s over K = 1's. Then its latency cases.
func (o *Options) runParallel(ctx context.Context, e *env, plan Plan, emit func(*Result)) error {
	pp := plan.Parallel
	srv, err := e.parallelServer(pp)
	if err != nil {
		return err
	}
	c := pp.Combo
	topic := "par-" + c.Name()
	o.progress("seeding %s: %d records (parallel: %d BEs, %d MiB/s per load)", topic, c.Records, pp.Backends, pp.BytesPerSec>>20)
	end, err := e.seed(ctx, topic, c.Partitions, c.Format, c.RecordBytes, c.Records)
	if err != nil {
		return err
	}
	debug.FreeOSMemory()
	modes := append([]string{"baseline"}, pp.Ks...)
	runs := make(map[string][]*Result, len(modes))
	for round := range max(plan.Repeat, 1) {
		for i := range modes {
			k := modes[(i+round)%len(modes)]
			r, err := o.runParallelCase(ctx, e, srv, plan, topic, end, k, round)
			if err != nil {
				return err
			}
			runs[k] = append(runs[k], r)
		}
	}
	base := median(runs["baseline"])
	base.setRange(runs["baseline"])
	emit(base)
	var k1 *Result
	for _, k := range pp.Ks {
		r := median(runs[k])
		r.setRange(runs[k])
		r.setRatios(base)
		if k == "1" {
			k1 = r
		}
		if k1 != nil && k1.MBPerS > 0 {
			r.RatioToK1 = r.MBPerS / k1.MBPerS
		}
		emit(r)
	}
	for _, lc := range pp.Latency {
		r, err := o.runLatencyCase(ctx, e, lc)
		if err != nil {
			return err
		}
		r.Backends, r.LoadMBPerSCap = pp.Backends, float64(pp.BytesPerSec)/1e6
		emit(r)
	}
	return nil
}

// runParallelCase runs one case of the parallel family: the baseline, or
// the exactly-once sink with doris.sub_loads k and doris.be_spread
// backends into srv.
func (o *Options) runParallelCase(ctx context.Context, e *env, srv *doristest.Server, plan Plan, topic string, end map[int32]int64, k string, round int) (*Result, error) {
	pp := plan.Parallel
	c := pp.Combo
	mode := "exactly-once"
	name := fmt.Sprintf("parallel-%s/%s-k%s", c.Name(), mode, k)
	kind := kindSink
	if k == "baseline" {
		kind, mode, name = kindBaseline, "baseline", fmt.Sprintf("parallel-%s/baseline", c.Name())
	}
	s, err := e.caseSpec(kind, c.Format)
	if err != nil {
		return nil, err
	}
	s.FE, s.MySQL, s.BESpread = srv.FEURL(), srv.MySQLAddr(), "backends"
	s.Topic, s.End, s.Mode, s.Interval, s.RecordBytes = topic, end, mode, plan.Interval, c.RecordBytes
	switch k {
	case "baseline":
	case "auto":
		s.SubLoadsAuto = true
	default:
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("parallel K %q: want a positive integer or auto", k)
		}
		s.SubLoads = n
	}
	if round == 0 {
		s.CPUProfile = o.profile(name)
	}
	o.progress("running %s", name)
	var before int64
	if kind == kindSink {
		if before, err = countedOn(srv, c.Format); err != nil {
			return nil, err
		}
	}
	wire0 := srv.WireBytes()
	m, err := o.runChild(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if m.res.Records != c.Records {
		return nil, fmt.Errorf("%s: read %d records, the topic has %d", name, m.res.Records, c.Records)
	}
	r := &Result{Case: name, Kind: KindThroughput, Mode: mode, Format: c.Format, RecordBytes: c.RecordBytes,
		Partitions: c.Partitions, Backends: pp.Backends, LoadMBPerSCap: float64(pp.BytesPerSec) / 1e6}
	r.fill(m)
	if kind == kindBaseline {
		one := 1.0
		r.RatioToBaseline = &one
		return r, nil
	}
	after, err := countedOn(srv, c.Format)
	if err != nil {
		return nil, err
	}
	if got := after - before; got != c.Records {
		return nil, fmt.Errorf("%s: Doris counted %d rows, want %d", name, got, c.Records)
	}
	r.SubLoads = k
	r.IntervalS = plan.Interval.Seconds()
	r.setWire(srv.WireBytes()-wire0, m.res.Bytes)
	return r, nil
}
