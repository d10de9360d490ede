package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// KindGroup is a group-mode case in Result.Kind.
const KindGroup = "group"

// GroupCase measures group mode: Members copies of one `doris-sink run`
// config (job.slots Slots, each member its own data dir) on one topic of
// Partitions partitions of 1 KiB JSON.
type GroupCase struct {
	Members, Slots, Partitions int
	// Records are seeded before the members start: the throughput phase
	// loads them.
	Records int64
	// Interval is delivery.checkpoint_interval: the resolution of the
	// pause figures.
	Interval time.Duration
	// SessionTimeout is kafka.session_timeout: a killed member's slots
	// move after it.
	SessionTimeout time.Duration
	// Rate is the records/s produced while a member joins, leaves and is
	// killed; Observe how long after each event the pause is looked for.
	Rate    int
	Observe time.Duration
}

// Name is e.g. "group-m2-s4-p8".
func (g GroupCase) Name() string {
	return fmt.Sprintf("group-m%d-s%d-p%d", g.Members, g.Slots, g.Partitions)
}

// GroupPlan is --group: 1, 2 and 4 members sharing 4 slots over 8
// partitions (quick: fewer records, shorter windows).
func GroupPlan(quick bool) Plan {
	var cs []GroupCase
	for _, m := range []int{1, 2, 4} {
		cs = append(cs, groupCase(m, quick))
	}
	return Plan{Group: cs}
}

// groupCase is the case of GroupPlan with m members sharing 4 slots over 8
// partitions.
func groupCase(m int, quick bool) GroupCase {
	records, observe, rate := int64(256<<10), 10*time.Second, 4000
	if quick {
		records, observe, rate = 64<<10, 6*time.Second, 2000
	}
	return GroupCase{Members: m, Slots: 4, Partitions: 8, Records: records, Interval: 250 * time.Millisecond,
		SessionTimeout: 6 * time.Second, Rate: rate, Observe: observe}
}

// groupRun is one group case in progress.
type groupRun struct {
	o       *Options
	e       *env
	gc      GroupCase
	job     string
	topic   string
	dir     string
	log     *groupLog
	members []*member
	nextID  int
}

// runGroupCase runs gc: throughput of Members members loading the seeded
// records, then, while records arrive at gc.Rate, the pause when a member
// joins and when it leaves (SIGTERM), and with 2 or more members the time
// a killed member's partitions take to be loaded again by another.
func (o *Options) runGroupCase(ctx context.Context, e *env, gc GroupCase) (*Result, error) {
	name := gc.Name() + "/exactly-once"
	e.seq++
	g := &groupRun{o: o, e: e, gc: gc, job: fmt.Sprintf("bench-%d", e.seq), log: newGroupLog()}
	g.topic = "g-" + g.job
	var err error
	if g.dir, err = os.MkdirTemp(e.dir, g.job+"-"); err != nil {
		return nil, err
	}
	defer g.stopAll()
	if err := e.createTopic(g.topic, gc.Partitions); err != nil {
		return nil, err
	}
	before, err := e.counted("json")
	if err != nil {
		return nil, err
	}
	r := &Result{Case: name, Kind: KindGroup, Mode: "exactly-once", Format: "json", RecordBytes: 1024, Partitions: gc.Partitions,
		Members: gc.Members, Slots: gc.Slots, IntervalS: gc.Interval.Seconds(), SessionTimeoutMS: float64(gc.SessionTimeout.Milliseconds())}

	// Throughput with the group formed: the members start on the empty
	// topic, and once the group is stable with every slot assigned the
	// records are produced; the window runs from the first produce to the
	// last decision.
	o.progress("running %s: %d members join", name, gc.Members)
	t0 := time.Now()
	for range gc.Members {
		if _, err := g.start(); err != nil {
			return nil, err
		}
	}
	if err := g.stable(ctx, gc.Members); err != nil {
		return nil, g.withTails(err)
	}
	r.StartupMS = ms(time.Since(t0))
	o.progress("running %s: throughput of %d records", name, gc.Records)
	cpu0, cpuErr := g.membersCPU()
	seeded := time.Now()
	end, err := e.produceRows(ctx, g.topic, gc.Partitions, "json", 1024, 0, gc.Records)
	if err != nil {
		return nil, err
	}
	r.ProduceMS = ms(time.Since(seeded))
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	err = g.log.wait(wctx, fmt.Sprintf("%s: decide the %d seeded records", name, gc.Records), func() bool { return g.log.decidedUpTo(end) }, g.exitedMember)
	cancel()
	if err != nil {
		return nil, g.withTails(err)
	}
	g.throughput(r, seeded)
	if cpuErr == nil {
		var cpu1 time.Duration
		if cpu1, cpuErr = g.membersCPU(); cpuErr == nil && r.Records > 0 {
			// The members' CPU over the throughput window, per GB of the
			// 1 KiB values: what a user pays per member set.
			r.CPUSeconds = (cpu1 - cpu0).Seconds()
			r.CPUSecondsPerGB = r.CPUSeconds / (float64(r.Records) * 1024 / 1e9)
		}
	}
	if cpuErr != nil {
		o.progress("%s: no CPU-s/GB: %v", name, cpuErr)
	}

	o.progress("running %s: join, leave, kill -9 at %d records/s", name, gc.Rate)
	pctx, stopProducing := context.WithCancel(ctx)
	produced, perr := g.produce(pctx, gc.Rate)
	err = g.events(ctx, r)
	stopProducing()
	total := gc.Records + <-produced
	if err == nil {
		err = <-perr
	}
	if err != nil {
		return nil, g.withTails(err)
	}
	// Everything produced is loaded exactly once before the drain.
	if err := g.drain(ctx, total); err != nil {
		return nil, g.withTails(err)
	}
	after, err := e.counted("json")
	if err != nil {
		return nil, err
	}
	if got := after - before; got != total {
		return nil, fmt.Errorf("%s: Doris counted %d rows, %d were produced", name, got, total)
	}
	return r, nil
}

// membersCPU sums the CPU time the running members have used so far.
func (g *groupRun) membersCPU() (time.Duration, error) {
	var sum time.Duration
	for _, m := range g.members {
		if m.exited() {
			return 0, fmt.Errorf("member %d exited", m.id)
		}
		c, err := procCPU(m.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

// throughput fills the throughput figures: per member and in total, over
// the window from the first produce (from) to the last decision.
func (g *groupRun) throughput(r *Result, from time.Time) {
	var last time.Time
	per := map[int]int64{}
	for _, d := range g.log.snapshot() {
		per[d.member] += d.records
		if d.at.After(last) {
			last = d.at
		}
		r.Records += d.records
		r.Checkpoints++
	}
	r.Seconds = last.Sub(from).Seconds()
	if r.Seconds <= 0 {
		return
	}
	r.RecordsPerS = float64(r.Records) / r.Seconds
	r.MBPerS = float64(r.Records) * 1024 / 1e6 / r.Seconds
	for _, m := range g.members {
		r.MemberRecordsPerS = append(r.MemberRecordsPerS, float64(per[m.id])/r.Seconds)
	}
}

// events measures the join, leave and kill phases while records arrive.
func (g *groupRun) events(ctx context.Context, r *Result) error {
	// Steady state first: the longest gap over one observation window.
	steadyFrom := time.Now()
	if err := g.loaded(ctx, steadyFrom, "steady stream"); err != nil {
		return err
	}
	sleepCtx(ctx, g.gc.Observe)
	now := time.Now()
	r.SteadyGapMS = ms(longestGap(g.log.snapshot(), steadyFrom, now))
	r.SteadyPartitionGapMS = ms(longestPartitionGap(g.log.snapshot(), steadyFrom, now))

	tj := time.Now()
	joiner, err := g.start()
	if err != nil {
		return err
	}
	sleepCtx(ctx, g.gc.Observe)
	now = time.Now()
	r.RebalancePauseJoinMS = ms(longestGap(g.log.snapshot(), tj, now))
	r.PartitionPauseJoinMS = ms(longestPartitionGap(g.log.snapshot(), tj, now))

	tl := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err = joiner.stop(sctx, syscall.SIGTERM)
	cancel()
	g.drop(joiner)
	if err != nil {
		return err
	}
	sleepCtx(ctx, g.gc.Observe)
	now = time.Now()
	r.RebalancePauseLeaveMS = ms(longestGap(g.log.snapshot(), tl, now))
	r.PartitionPauseLeaveMS = ms(longestPartitionGap(g.log.snapshot(), tl, now))

	if len(g.members) < 2 {
		return nil // nobody would inherit a killed member's slots
	}
	victim, parts := g.busiest()
	if victim == nil {
		return fmt.Errorf("bench group: no member loaded records during the observation window")
	}
	tk := time.Now()
	_ = victim.cmd.Process.Kill()
	<-victim.done
	g.drop(victim)
	wctx, cancel := context.WithTimeout(ctx, 3*g.gc.SessionTimeout+time.Minute)
	defer cancel()
	var inherited time.Time
	err = g.log.wait(wctx, fmt.Sprintf("load partitions %v of member %d after kill -9", parts, victim.id), func() bool {
		for _, d := range g.log.decisions {
			if d.member == victim.id || !d.at.After(tk) {
				continue
			}
			for _, p := range d.partitions() {
				if parts[p] {
					inherited = d.at
					return true
				}
			}
		}
		return false
	}, g.exitedMember)
	if err != nil {
		return err
	}
	r.InheritMS = ms(inherited.Sub(tk))
	return nil
}

// stable waits until the job's group is Stable with n members holding
// every slot (DescribeGroups).
func (g *groupRun) stable(ctx context.Context, n int) error {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(g.e.brokers...))
	if err != nil {
		return fmt.Errorf("bench group: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := coordlog.SlotTopic(g.job)
	tk := time.NewTicker(50 * time.Millisecond) // the group's state is only observable by asking
	defer tk.Stop()
	last := "not described"
	for {
		if err := g.exitedMember(); err != nil {
			return err
		}
		ds, err := adm.DescribeGroups(wctx, g.job)
		if d, ok := ds[g.job]; err == nil && ok && d.Err == nil {
			assigned := 0
			for _, m := range d.Members {
				if a, ok := m.Assigned.AsConsumer(); ok {
					for _, t := range a.Topics {
						if t.Topic == topic {
							assigned += len(t.Partitions)
						}
					}
				}
			}
			if d.State == "Stable" && len(d.Members) == n && assigned == g.gc.Slots {
				return nil
			}
			last = fmt.Sprintf("%s, %d members, %d slots assigned", d.State, len(d.Members), assigned)
		}
		select {
		case <-tk.C:
		case <-wctx.Done():
			return fmt.Errorf("bench group %s: not stable with %d members and %d slots (last: %s): %w", g.job, n, g.gc.Slots, last, wctx.Err())
		}
	}
}

// loaded waits for a decision that loaded records after t.
func (g *groupRun) loaded(ctx context.Context, t time.Time, what string) error {
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return g.log.wait(wctx, what, func() bool {
		for _, d := range g.log.decisions {
			if d.records > 0 && d.at.After(t) {
				return true
			}
		}
		return false
	}, g.exitedMember)
}

// busiest returns the member whose decision was the last to load records,
// and the partitions it loaded in its decisions of the last observation
// window: the slots it owns now.
func (g *groupRun) busiest() (*member, map[int32]bool) {
	ds := g.log.snapshot()
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].records == 0 {
			continue
		}
		for _, m := range g.members {
			if m.id != ds[i].member {
				continue
			}
			parts := map[int32]bool{}
			since := ds[i].at.Add(-g.gc.Observe / 2)
			for _, d := range ds {
				if d.member == m.id && d.at.After(since) {
					for _, p := range d.partitions() {
						parts[p] = true
					}
				}
			}
			return m, parts
		}
	}
	return nil, nil
}

// start starts one more member.
func (g *groupRun) start() (*member, error) {
	g.nextID++
	cfg, err := g.config(g.nextID)
	if err != nil {
		return nil, err
	}
	m, err := g.o.startMember(g.log, g.nextID, cfg)
	if err != nil {
		return nil, err
	}
	g.members = append(g.members, m)
	return m, nil
}

func (g *groupRun) drop(m *member) {
	for i, x := range g.members {
		if x == m {
			g.members = append(g.members[:i], g.members[i+1:]...)
			return
		}
	}
}

// config writes member id's config file: the job's, with its own data
// dir.
func (g *groupRun) config(id int) (string, error) {
	dir := filepath.Join(g.dir, fmt.Sprintf("m%d", id))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job: { name: %s, data_dir: %s, slots: %d }\n", g.job, filepath.Join(dir, "data"), g.gc.Slots)
	fmt.Fprintf(&b, "kafka: { brokers: [%s], topic: %s, group: %s, start: earliest, session_timeout: %s }\n",
		strings.Join(g.e.brokers, ", "), g.topic, g.job, g.gc.SessionTimeout)
	fmt.Fprintf(&b, "doris: { fe: [%s], mysql: %s, user: root, database: %s, table: rows_json, format: json }\n",
		g.e.doris.FEURL(), g.e.doris.MySQLAddr(), benchDB)
	fmt.Fprintf(&b, "delivery: { guarantee: exactly-once, checkpoint_interval: %s }\n", g.gc.Interval)
	b.WriteString("metrics: { listen: \"\" }\nlog: { format: json, level: info }\n")
	path := filepath.Join(dir, "job.yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// produce writes rate 1 KiB JSON records/s (round robin over the
// partitions) until ctx ends; it then sends the count and the error.
func (g *groupRun) produce(ctx context.Context, rate int) (<-chan int64, <-chan error) {
	count, errc := make(chan int64, 1), make(chan error, 1)
	go func() {
		var n int64
		err := func() error {
			cl, err := kgo.NewClient(kgo.SeedBrokers(g.e.brokers...), kgo.DefaultProduceTopic(g.topic),
				kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err != nil {
				return fmt.Errorf("bench group producer: %w", err)
			}
			defer cl.Close()
			gen := newRowGen("json", 1024, 7)
			const tick = 50 * time.Millisecond
			per := max(rate*int(tick)/int(time.Second), 1)
			tk := time.NewTicker(tick)
			defer tk.Stop()
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-tk.C:
				}
				rs := make([]*kgo.Record, 0, per)
				for range per {
					rs = append(rs, &kgo.Record{Partition: int32(n % int64(g.gc.Partitions)), Value: gen.appendRow(nil, g.gc.Records+n)})
					n++
				}
				// The records of a tick are produced before the next (acks).
				if err := cl.ProduceSync(context.WithoutCancel(ctx), rs...).FirstErr(); err != nil {
					return fmt.Errorf("bench group producer: %w", err)
				}
			}
		}()
		count <- n
		errc <- err
	}()
	return count, errc
}

// drain waits until every record produced (total) is decided, then
// SIGTERMs the members and expects each to exit 0.
func (g *groupRun) drain(ctx context.Context, total int64) error {
	end, err := g.e.endOffsets(ctx, g.topic)
	if err != nil {
		return err
	}
	var sum int64
	for _, e := range end {
		sum += e
	}
	if sum != total {
		return fmt.Errorf("bench group: topic %s ends at %d records, %d were produced", g.topic, sum, total)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := g.log.wait(wctx, "decide every record produced", func() bool { return g.log.decidedUpTo(end) }, g.exitedMember); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(g.members))
	for i, m := range g.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.stop(wctx, syscall.SIGTERM)
		}()
	}
	wg.Wait()
	g.members = nil
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// exitedMember is an error naming a running member that exited on its own.
func (g *groupRun) exitedMember() error {
	for _, m := range g.members {
		if m.exited() {
			return fmt.Errorf("member %d exited on its own (%v): %s", m.id, m.err, m.lastLines(5))
		}
	}
	return nil
}

// stopAll kills whatever still runs (an error path).
func (g *groupRun) stopAll() {
	for _, m := range g.members {
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// withTails adds every member's last log lines to err.
func (g *groupRun) withTails(err error) error {
	var b strings.Builder
	for _, m := range g.members {
		fmt.Fprintf(&b, "\n--- member %d ---\n%s", m.id, m.lastLines(8))
	}
	return fmt.Errorf("%w%s", err, b.String())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sleepCtx waits d or until ctx ends: an observation window of a
// measurement, not a synchronisation.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
