package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Run measures o's plan and writes the report (a table, or one JSON object
// per case).
func Run(ctx context.Context, o *Options) error {
	plan := o.plan()
	if o.ProfileDir != "" {
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return fmt.Errorf("--profile-dir: %w", err)
		}
	}
	e, err := startEnv()
	if err != nil {
		return err
	}
	defer e.close()
	restore := o.pin(e)
	defer restore()
	o.pinLine = e.pin.String()
	var results []*Result
	emit := func(r *Result) { results = append(results, r) }
	if err := o.runThroughput(ctx, e, plan, emit); err != nil {
		return err
	}
	if plan.Parallel != nil {
		if err := o.runParallel(ctx, e, plan, emit); err != nil {
			return err
		}
	}
	for _, lc := range plan.Latency {
		r, err := o.runLatencyCase(ctx, e, lc)
		if err != nil {
			return err
		}
		emit(r)
	}
	if plan.Recovery {
		r, err := o.runRecovery(ctx, e, cmp.Or(plan.RecoveryRecords, 64<<10))
		if err != nil {
			return err
		}
		emit(r)
	}
	for _, gc := range plan.Group {
		r, err := o.runGroupCase(ctx, e, gc)
		if err != nil {
			return err
		}
		emit(r)
	}
	for _, size := range plan.Memory {
		r, err := o.runMemoryCase(ctx, e, size)
		if err != nil {
			return err
		}
		emit(r)
	}
	setAvroRatios(results)
	setGroupCPURatios(results)
	return o.report(results)
}

// setGroupCPURatios compares each group case's CPU-s/GB (its members'
// over the throughput window) with the bare consumer's on the same data,
// 1 KiB JSON over 8 partitions (json-1KiB-p8/baseline), when the run has
// it.
func setGroupCPURatios(rs []*Result) {
	var base *Result
	for _, r := range rs {
		if r.Kind == KindThroughput && r.Case == "json-1KiB-p8/baseline" && r.Backends == 0 {
			base = r
		}
	}
	if base == nil {
		return
	}
	bc := cmp.Or(base.CPUSecondsPerGBMedian, base.CPUSecondsPerGB)
	for _, r := range rs {
		if r.Kind == KindGroup && r.CPUSecondsPerGB > 0 && bc > 0 {
			r.CPURatioToBaseline = r.CPUSecondsPerGB / bc
		}
	}
}

func (o *Options) plan() Plan {
	var p Plan
	switch {
	case o.Plan != nil:
		p = *o.Plan
	case o.Parallel:
		p = DefaultParallelPlan(o.Quick)
	case o.Memory:
		p = MemoryPlan(o.Quick)
	case o.Group:
		p = GroupPlan(o.Quick)
	case o.Quick:
		p = QuickPlan()
	default:
		p = FullPlan()
	}
	if len(o.Cases) > 0 && o.Plan == nil {
		// Validated by the command; an unknown name here keeps the plan.
		if sel, err := selectCombos(FullPlan(), o.Cases); err == nil {
			p = sel
		}
	}
	if o.Repeat > 1 {
		p.Repeat = o.Repeat
	}
	if o.CaseBytes > 0 && o.Plan == nil {
		p.Combos = sized(p.Combos, o.CaseBytes)
	}
	if len(o.Compress) > 0 && len(p.Combos) > 0 {
		p.Modes = slices.Clone(p.Modes)
		for _, c := range o.Compress {
			p.Modes = append(p.Modes, "exactly-once+"+strings.ToLower(c))
		}
	}
	return p
}

// pin places the parent and every child on separate CPUs when the machine
// allows (planPinning), records the outcome in e.pin for the children's
// specs and the report, and returns what restores the parent's affinity.
func (o *Options) pin(e *env) (restore func()) {
	restore = func() {}
	if o.NoPin {
		e.pin = pinning{Reason: "not applied: --no-pin"}
		return restore
	}
	allowed, err := allowedCPUs()
	if err != nil {
		e.pin = pinning{Reason: "not applied: " + err.Error()}
		return restore
	}
	p := planPinning(allowed)
	p.Allowed = allowed
	if p.Applied {
		if err := pinProcess(p.ParentCPUs); err != nil {
			p = pinning{Reason: "not applied: " + err.Error()}
		} else {
			restore = func() { _ = pinProcess(allowed) }
		}
	}
	e.pin = p
	o.progress("%s", p)
	return restore
}

func (o *Options) progress(format string, a ...any) {
	fmt.Fprintf(o.IO.ErrOut, "bench: "+format+"\n", a...)
}

func (o *Options) profile(name string) string {
	if o.ProfileDir == "" {
		return ""
	}
	return filepath.Join(o.ProfileDir, strings.ReplaceAll(name, "/", "_")+".pprof")
}

// runThroughput seeds each combo's topic once and runs, per round, the
// baseline and the sink in every mode on it; the median round by
// records/s is kept.
func (o *Options) runThroughput(ctx context.Context, e *env, plan Plan, emit func(*Result)) error {
	rounds := max(plan.Repeat, 1)
	for _, c := range plan.Combos {
		topic := "t-" + c.Name()
		o.progress("seeding %s: %d records", topic, c.Records)
		var (
			end   map[int32]int64
			total int64
		)
		t0 := time.Now()
		err := e.pin.unpinned(func() error {
			var err error
			if end, total, err = e.seedBytes(ctx, topic, c.Partitions, c.Format, c.RecordBytes, c.Records); err != nil {
				return err
			}
			return e.warm(ctx, topic, end)
		})
		if err != nil {
			return err
		}
		o.progress("seeded and read %s once: %.1f GB in %.1f s", topic, float64(total)/1e9, time.Since(t0).Seconds())
		// The seeding garbage is collected now, not during the cases.
		debug.FreeOSMemory()
		sinkModes := append(slices.Clone(plan.Modes), c.Extra...)
		modes := append([]string{"baseline"}, sinkModes...)
		runs := make(map[string][]*Result, len(modes))
		for round := range rounds {
			// Rotate the order each round: no mode always runs first.
			for i := range modes {
				mode := modes[(i+round)%len(modes)]
				r, err := o.runThroughputCase(ctx, e, c, topic, end, total, mode, plan, round)
				if err != nil {
					return err
				}
				o.progress("%s round %d: %.0f records/s, %.1f MB/s, %.2f cpu-s/GB over the %s; exec→first record %.0f ms, tail %.0f ms",
					r.Case, round+1, r.RecordsPerS, r.MBPerS, r.CPUSecondsPerGB, r.MeasuredOver, r.ExecToFirstRecordMS, r.CommitTailMS)
				runs[mode] = append(runs[mode], r)
			}
		}
		// The topic's records leave the parent before the next combo.
		if err := e.deleteTopic(topic); err != nil {
			return err
		}
		rss, peak := parentRSS()
		o.progress("%s done: parent RSS %.0f MiB after deleting the topic (peak %.0f MiB)", c.Name(), rss, peak)
		if rounds > 1 {
			o.spread(c, modes, runs)
		}
		base := median(runs["baseline"])
		base.setRange(runs["baseline"])
		base.ParentRSSMB = rss
		emit(base)
		var alo, limit *Result
		if rs := runs["at-least-once"]; len(rs) > 0 {
			alo = median(rs)
		}
		if rs := runs["limit"]; len(rs) > 0 {
			limit = median(rs)
			limit.setRange(rs)
		}
		for _, mode := range sinkModes {
			r := median(runs[mode])
			if mode != "limit" {
				r.setRange(runs[mode])
			}
			r.setRatios(base)
			if mode == "exactly-once" && alo != nil && alo.RecordsPerS > 0 {
				r.RatioToAtLeastOnce = r.RecordsPerS / alo.RecordsPerS
			}
			if limit != nil && mode != "limit" {
				r.setLimitRatios(limit)
			}
			r.setTarget()
			r.ParentRSSMB = rss
			emit(r)
		}
	}
	return nil
}

// spread reports, per mode, every round's records/s and its ratio to the
// same round's baseline (stderr): the median alone hides the noise.
func (o *Options) spread(c Combo, modes []string, runs map[string][]*Result) {
	base := runs["baseline"]
	for _, mode := range modes {
		var b strings.Builder
		for i, r := range runs[mode] {
			fmt.Fprintf(&b, " %.0f", r.RecordsPerS)
			if mode != "baseline" && i < len(base) && base[i].RecordsPerS > 0 {
				fmt.Fprintf(&b, " (%.2f×)", r.RecordsPerS/base[i].RecordsPerS)
			}
		}
		o.progress("rounds %s/%s: records/s%s", c.Name(), mode, b.String())
	}
}

func median(rs []*Result) *Result {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b *Result) int {
		switch {
		case a.RecordsPerS < b.RecordsPerS:
			return -1
		case a.RecordsPerS > b.RecordsPerS:
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

// runThroughputCase runs one mode on combo c's seeded topic (total value
// bytes): "baseline", "limit", or a sink mode, "exactly-once",
// "at-least-once", optionally with "+gz"/"+lz4" (doris.properties.compress_type)
// or "+tls" (FE and BE over https, on the TLS emulator), at plan's
// checkpoint interval and fetch bound.
func (o *Options) runThroughputCase(ctx context.Context, e *env, c Combo, topic string, end map[int32]int64, total int64,
	mode string, plan Plan, round int) (*Result, error) {
	name := c.Name() + "/" + mode
	kind := kindSink
	switch mode {
	case "baseline":
		kind = kindBaseline
	case "limit":
		kind = kindLimit
	}
	s, err := e.caseSpec(kind, c.Format)
	if err != nil {
		return nil, err
	}
	s.Topic, s.End, s.TotalBytes, s.Mode, s.Interval, s.RecordBytes = topic, end, total, mode, plan.Interval, c.RecordBytes
	s.FetchMaxBytes = plan.FetchMaxBytes
	srv := e.doris
	if kind == kindSink {
		var extra string
		s.Mode, extra, _ = strings.Cut(mode, "+") // "exactly-once+gz": compress_type gz
		if extra == "tls" {
			if srv, err = e.tlsServer(); err != nil {
				return nil, err
			}
			s.FE, s.MySQL, s.TLSCAPEM = srv.FEURL(), srv.MySQLAddr(), e.tlsCA
		} else {
			s.Compress = extra
		}
	}
	if kind == kindLimit {
		if s.LimitURL, err = e.limitSink(); err != nil {
			return nil, err
		}
	}
	if round == 0 {
		s.CPUProfile = o.profile(name)
	}
	o.progress("running %s", name)
	before, err := countedOn(srv, c.Format)
	if err != nil {
		return nil, err
	}
	wire0, limit0 := srv.WireBytes(), e.limitBytes.Load()
	m, err := o.runChild(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if m.res.Records != c.Records {
		return nil, fmt.Errorf("%s: read %d records, the topic has %d", name, m.res.Records, c.Records)
	}
	switch kind {
	case kindSink:
		after, err := countedOn(srv, c.Format)
		if err != nil {
			return nil, err
		}
		if got := after - before; got != c.Records {
			return nil, fmt.Errorf("%s: Doris counted %d rows, want %d", name, got, c.Records)
		}
	case kindLimit:
		// Every value and its delimiter reached the discarding sink.
		if got, want := e.limitBytes.Load()-limit0, m.res.Bytes+m.res.Records; got != want {
			return nil, fmt.Errorf("%s: the limit sink read %d bytes, want %d (values and newlines)", name, got, want)
		}
	}
	r := &Result{Case: name, Kind: KindThroughput, Mode: mode, Format: c.Format, RecordBytes: c.RecordBytes, Partitions: c.Partitions}
	r.fill(m)
	switch kind {
	case kindSink:
		r.setWire(srv.WireBytes()-wire0, m.res.Bytes)
		r.IntervalS = plan.Interval.Seconds()
	case kindLimit:
		r.IntervalS = plan.Interval.Seconds()
	default:
		one := 1.0
		r.RatioToBaseline = &one
	}
	return r, nil
}

func (o *Options) runLatencyCase(ctx context.Context, e *env, lc LatencyCase) (*Result, error) {
	name := fmt.Sprintf("latency-%s-%s", lc.Interval, lc.Mode)
	if lc.SubLoads > 1 {
		name = fmt.Sprintf("latency-%s-%s-k%d", lc.Interval, lc.Mode, lc.SubLoads)
	}
	s, err := e.caseSpec(kindLatency, "json")
	if err != nil {
		return nil, err
	}
	s.Topic = fmt.Sprintf("lat-%d", e.seq)
	if err := e.createTopic(s.Topic, max(lc.Partitions, 1)); err != nil {
		return nil, err
	}
	s.SubLoads = lc.SubLoads
	if lc.Parallel {
		if e.par == nil {
			return nil, fmt.Errorf("%s: the parallel emulator is not started", name)
		}
		s.FE, s.MySQL, s.BESpread = e.par.FEURL(), e.par.MySQLAddr(), "backends"
	}
	s.Mode, s.Interval, s.Duration, s.Rate, s.RecordBytes = lc.Mode, lc.Interval, lc.Duration, lc.Rate, 1024
	s.CPUProfile = o.profile(name)
	o.progress("running %s (%s at %d records/s)", name, lc.Duration, lc.Rate)
	m, err := o.runChild(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := &Result{Case: name, Kind: KindLatency, Mode: lc.Mode, Format: "json", RecordBytes: 1024, Partitions: max(lc.Partitions, 1)}
	if lc.SubLoads > 1 {
		r.SubLoads = fmt.Sprint(lc.SubLoads)
	}
	r.fill(m)
	r.IntervalS = lc.Interval.Seconds()
	if l := m.res.LatencyMS; len(l) == 3 {
		r.LatencyP50MS, r.LatencyP99MS, r.LatencyMaxMS = l[0], l[1], l[2]
	}
	return r, nil
}

// runRecovery loads a topic with a victim, kills it with SIGKILL while a
// checkpoint streams, restarts on the same store and measures exec →
// first new record read.
func (o *Options) runRecovery(ctx context.Context, e *env, records int64) (*Result, error) {
	const name = "recovery-kill-9/exactly-once"
	c := Combo{Format: "json", RecordBytes: 1024, Partitions: 1, Records: records}
	s, err := e.caseSpec(kindVictim, c.Format)
	if err != nil {
		return nil, err
	}
	s.Topic, s.Mode, s.Interval, s.RecordBytes, s.MaxRows = "recovery", "exactly-once", time.Second, c.RecordBytes, c.Records/16
	o.progress("seeding %s: %d records", s.Topic, c.Records)
	if _, err := e.seed(ctx, s.Topic, c.Partitions, c.Format, c.RecordBytes, c.Records); err != nil {
		return nil, err
	}
	o.progress("running %s: victim", name)
	if err := o.killWhenReady(ctx, s); err != nil {
		return nil, err
	}
	s.Kind, s.MaxRows = kindRecover, 0
	o.progress("running %s: restart", name)
	m, err := o.runChild(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	w := m.res
	r := &Result{Case: name, Kind: KindRecovery, Mode: "exactly-once", Format: c.Format, RecordBytes: c.RecordBytes, Partitions: 1,
		CPUSeconds: m.cpu.Seconds(), PeakRSSMB: m.rssMB, ParentCPUSeconds: m.parentCPU.Seconds(),
		RecoveryMS:    float64(w.FirstRead-m.started.UnixNano()) / 1e6,
		RecoverCallMS: float64(w.RecoverEnd-w.RecoverStart) / 1e6,
		LabelsChecked: w.LabelsChecked, LabelActions: w.Actions,
		Pinned: len(w.PinnedCPUs) > 0, PinChildCPUs: w.PinnedCPUs}
	return r, nil
}

// runMemoryCase writes size bytes of 1 KiB JSON rows through the Loader
// into one checkpoint (no Kafka: the sink side only).
func (o *Options) runMemoryCase(ctx context.Context, e *env, size int64) (*Result, error) {
	name := fmt.Sprintf("memory-%dMiB/exactly-once", size>>20)
	s, err := e.caseSpec(kindMemory, "json")
	if err != nil {
		return nil, err
	}
	s.Mode, s.Bytes, s.RecordBytes = "exactly-once", size, 1024
	s.CPUProfile = o.profile(name)
	o.progress("running %s", name)
	before, err := e.counted("json")
	if err != nil {
		return nil, err
	}
	m, err := o.runChild(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	after, err := e.counted("json")
	if err != nil {
		return nil, err
	}
	if after-before != m.res.Records {
		return nil, fmt.Errorf("%s: Doris counted %d rows, want %d", name, after-before, m.res.Records)
	}
	r := &Result{Case: name, Kind: KindMemory, Mode: "exactly-once", Format: "json", RecordBytes: 1024}
	r.fill(m)
	r.CheckpointMB = float64(m.res.Bytes) / (1 << 20)
	return r, nil
}
