package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Config configures a campaign.
type Config struct {
	// Binary is the doris-sink executable run as the sinks.
	Binary string
	// Dir holds the Kafka data, configs, stores and ledgers.
	Dir string
	// Seed determines the fault schedule and the produced history.
	Seed uint64
	// Cycles is the number of faults injected.
	Cycles int
	// Guarantee is delivery.guarantee: "exactly-once" or "at-least-once".
	Guarantee string
	// Coordinator is job.coordinator of the sinks: "" or "kafka" (the
	// default), or "file".
	Coordinator string
	// Format is the topic's record format: "" (JSON), FormatAvro or
	// FormatProtobuf.
	Format string
	// Scenarios is the fault table; nil means Scenarios.
	Scenarios []Scenario
	// Plan, when set, replaces the drawn plan (regression tests pin one
	// step).
	Plan []Step
	// RoutedTables, when > 1, makes the events sink route each event by
	// its RouteHeader header to one of that many Duplicate Key tables
	// (RoutedTable: events, events_r1, …): every checkpoint of that sink
	// then decides txns of several tables (docs/design.md §2).
	RoutedTables int
	// SourceTopics, when > 1, spreads the events over that many source
	// topics (SourceTopics: events, events_t1, …; a key always in the same
	// topic, so its versions stay ordered) and both sinks read all of them
	// (kafka.topics): every checkpoint covers the partitions of every
	// topic. Malformed records go to Topic.
	SourceTopics int
	// Keys is the number of distinct keys (default 50).
	Keys int
	// Timeout bounds each wait for progress (default 60 s): a sink that
	// makes no progress for that long fails the campaign (liveness).
	Timeout time.Duration
	// Logf receives one line per cycle; nil: none.
	Logf func(format string, args ...any)
}

// Result is a campaign's outcome: the figures of docs/reliability.md.
type Result struct {
	Seed      uint64
	Guarantee string
	Cycles    int
	Plan      []Step
	// Faults counts cycles by fault kind.
	Faults map[FaultKind]int
	// Kills counts sink process deaths by cause: "sigkill" (random moment
	// or while blocked), "failpoint:<name>" (exit 137 at that failpoint),
	// "failpoint-not-reached", "drain", "refused:<why>".
	Kills map[string]int
	// Records is how many records were produced (valid + malformed).
	Records int64
	// Report is the checker's verdict after the final drain.
	Report *Report
	// Problems lists protocol failures seen during the campaign (a drain
	// that did not exit 0, a refusal that did not happen, no progress).
	Problems []string
	Elapsed  time.Duration
}

// Failed reports whether the campaign broke a promise.
func (r *Result) Failed() bool {
	return len(r.Problems) > 0 || r.Report == nil || r.Report.Violations(r.Guarantee == "exactly-once") > 0
}

// campaign is one running campaign.
type campaign struct {
	cfg     Config
	c       *Cluster
	sinks   []*Sink
	hist    *History
	rng     *rand.Rand // history stream
	topics  []string   // source topics (Config.SourceTopics)
	records int64      // Kafka offsets produced, summed over partitions
	res     *Result
	// avro is the registry side of a FormatAvro campaign; nil for JSON.
	avro *avroTopic
}

// Run runs a campaign: it starts the cluster, runs cfg.Cycles faults,
// drains the sinks and checks. It returns an error only when the harness
// itself fails; broken promises are in Result.Problems and Result.Report.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Keys == 0 {
		cfg.Keys = 50
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Scenarios == nil {
		cfg.Scenarios = Scenarios
		if isRegistryFormat(cfg.Format) {
			cfg.Scenarios = AvroScenarios
		}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	eos := cfg.Guarantee == "exactly-once"
	start := time.Now()
	res := &Result{Seed: cfg.Seed, Guarantee: cfg.Guarantee, Cycles: cfg.Cycles, Faults: map[FaultKind]int{}, Kills: map[string]int{}}
	res.Plan = cfg.Plan
	if res.Plan == nil {
		res.Plan = Plan(cfg.Seed, cfg.Cycles, cfg.Scenarios, eos)
	}
	cl, err := NewCluster(filepath.Join(cfg.Dir, "kafka"))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	k := &campaign{cfg: cfg, c: cl, hist: NewHistory(cfg.Keys), rng: newRand(cfg.Seed, 1), res: res}
	topics, err := cl.CreateSourceTopics(ctx, max(cfg.SourceTopics, 1))
	if err != nil {
		return nil, err
	}
	k.topics = topics
	so := SinkOptions{Guarantee: cfg.Guarantee, CheckpointInterval: "150ms", CheckpointMaxRows: 60, Coordinator: cfg.Coordinator,
		Topics: topics}
	eventsTables := []string{EventsTable}
	if cfg.RoutedTables > 1 {
		if eventsTables, err = cl.CreateRoutedTables(cfg.RoutedTables); err != nil {
			return nil, err
		}
	}
	if cfg.Format == FormatAvro {
		if k.avro, err = newAvroTopic(); err != nil {
			return nil, err
		}
	}
	if cfg.Format == FormatProtobuf {
		if k.avro, err = newProtoTopic(); err != nil {
			return nil, err
		}
	}
	if k.avro != nil {
		defer k.avro.close()
		so.Format, so.Registry = cfg.Format, k.avro.srv.URL()
	}
	for _, t := range []string{EventsTable, StateTable} {
		o := so
		if t == EventsTable && cfg.RoutedTables > 1 {
			o.TableHeader = RouteHeader
		}
		s, err := NewSink(cfg.Dir, "chaos-"+t, t, cl, o)
		if err != nil {
			return nil, err
		}
		k.sinks = append(k.sinks, s)
	}
	for _, st := range res.Plan {
		res.Faults[st.Kind]++
		cfg.Logf("seed=%d %s", cfg.Seed, st)
		if err := k.cycle(ctx, st); err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("seed=%d %s: %v", cfg.Seed, st, err))
			cfg.Logf("seed=%d PROBLEM %s: %v", cfg.Seed, st, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	// Final: every sink recovers, loads everything and drains.
	if err := k.settle(ctx, false, nil); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("seed=%d final drain: %v", cfg.Seed, err))
	}
	res.Records = k.records
	chk := &Checker{Brokers: cl.Brokers(), MySQL: cl.Doris.MySQLAddr(), User: "root",
		Events: k.sinks[0], EventsTables: eventsTables, State: k.sinks[1], ExactlyOnce: eos, Topics: topics}
	if k.avro != nil {
		chk.Registry = so.Registry
		if cfg.Format == FormatProtobuf {
			chk.Format = FormatProtobuf
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rep, err := chk.Check(cctx)
	if err != nil {
		return res, fmt.Errorf("seed=%d check: %w", cfg.Seed, err)
	}
	res.Report = rep
	// The evidence is in Kafka (job.coordinator kafka): verify of the
	// events job from a config whose job.data_dir is empty (no machine of
	// the job) must reconcile it, exit 0.
	if cfg.Coordinator != "file" && eos {
		if out, code, err := verifyWithoutDataDir(cctx, cfg.Binary, k.sinks[0]); err != nil {
			return res, fmt.Errorf("seed=%d verify: %w", cfg.Seed, err)
		} else if code != 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("seed=%d verify of %s from a config with an empty job.data_dir exited %d: %s",
				cfg.Seed, k.sinks[0].Name, code, out))
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// verifyWithoutDataDir runs `doris-sink verify` with s's config (the one
// with the dead-letter topic, as the job ran) and job.data_dir replaced by
// a fresh, empty directory; it returns the output's tail and the exit
// code.
func verifyWithoutDataDir(ctx context.Context, binary string, s *Sink) (string, int, error) {
	b, err := os.ReadFile(s.ConfigDLQ)
	if err != nil {
		return "", 0, err
	}
	empty := filepath.Join(filepath.Dir(s.DataDir), "verify-empty-data")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return "", 0, err
	}
	path := filepath.Join(filepath.Dir(s.ConfigDLQ), "verify-no-data-dir.yaml")
	y := strings.Replace(string(b), "data_dir: "+s.DataDir, "data_dir: "+empty, 1)
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		return "", 0, err
	}
	return runVerify(ctx, binary, path)
}

// produce appends n events, with bad malformed records spread among them.
func (k *campaign) produce(ctx context.Context, n, bad int) error {
	rs := make([]*kgo.Record, 0, n+bad)
	for range n {
		e := k.hist.Next(k.rng)
		v := e.Encode()
		if k.avro != nil {
			var err error
			if v, err = k.avro.encode(e); err != nil {
				return err
			}
		}
		r := &kgo.Record{Key: e.KeyBytes(), Value: v}
		if len(k.topics) > 1 {
			r.Topic = k.topics[e.K%int64(len(k.topics))]
		}
		if k.cfg.RoutedTables > 1 {
			r.Headers = []kgo.RecordHeader{{Key: RouteHeader, Value: []byte(RoutedTable(e.EID, k.cfg.RoutedTables))}}
		}
		rs = append(rs, r)
	}
	for range bad {
		at := k.rng.IntN(len(rs) + 1)
		r := &kgo.Record{Key: []byte("bad"), Value: k.hist.Malformed()}
		rs = append(rs[:at], append([]*kgo.Record{r}, rs[at:]...)...)
	}
	if err := k.c.Produce(ctx, rs...); err != nil {
		return err
	}
	k.records += int64(len(rs))
	return nil
}

// start runs `doris-sink run` for every sink (with the dead-letter config
// when dlq), with extra environment.
func (k *campaign) start(dlq bool, env ...string) ([]*Process, error) {
	var ps []*Process
	for _, s := range k.sinks {
		cfgFile := s.Config
		if dlq {
			cfgFile = s.ConfigDLQ
		}
		p, err := StartProcess(k.cfg.Binary, []string{"run", "-c", cfgFile}, env...)
		if err != nil {
			for _, q := range ps {
				q.Kill()
			}
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func (k *campaign) waitCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, k.cfg.Timeout)
}

// waitReady waits for every process to finish recovery.
func (k *campaign) waitReady(ctx context.Context, ps []*Process) error {
	for i, p := range ps {
		wctx, cancel := k.waitCtx(ctx)
		err := p.WaitReady(wctx)
		cancel()
		if err != nil {
			return k.procErr(i, p, "recovery", err)
		}
	}
	return nil
}

func (k *campaign) procErr(i int, p *Process, what string, err error) error {
	return fmt.Errorf("sink %s: %s: %w\n--- last log lines ---\n%s", k.sinks[i].Name, what, err, p.Tail(15))
}

// drain waits until every process decided every record, SIGTERMs it and
// expects exit 0.
func (k *campaign) drain(ctx context.Context, ps []*Process) error {
	var errs []error
	for i, p := range ps {
		wctx, cancel := k.waitCtx(ctx)
		err := p.WaitDecided(wctx, k.records)
		cancel()
		if err != nil {
			errs = append(errs, k.procErr(i, p, fmt.Sprintf("no checkpoint decided up to offset sum %d (have %d)", k.records, p.Decided()), err))
			p.Kill()
			continue
		}
		p.Signal(syscall.SIGTERM)
	}
	for i, p := range ps {
		code, err := k.exit(ctx, p)
		if err != nil {
			errs = append(errs, k.procErr(i, p, "drain", err))
			continue
		}
		k.res.Kills["drain"]++
		if code != 0 && code != 137 { // 137: killed above after no progress
			errs = append(errs, k.procErr(i, p, "drain", fmt.Errorf("exit code %d, want 0", code)))
		}
	}
	return errors.Join(errs...)
}

// settle starts the sinks, lets them load everything and drains them.
func (k *campaign) settle(ctx context.Context, dlq bool, during func([]*Process) error) error {
	ps, err := k.start(dlq)
	if err != nil {
		return err
	}
	if during != nil {
		if err := during(ps); err != nil {
			killAll(ps)
			return err
		}
	}
	return k.drain(ctx, ps)
}

func (k *campaign) exit(ctx context.Context, p *Process) (int, error) {
	wctx, cancel := k.waitCtx(ctx)
	defer cancel()
	return p.Wait(wctx)
}

func killAll(ps []*Process) {
	for _, p := range ps {
		p.Kill()
	}
}

// sleep waits d or until ctx ends: the moment of a fault, not a
// synchronisation.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// SortedKeys returns m's keys sorted (report tables).
func SortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for key := range m {
		out = append(out, key)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Summary renders r as the Markdown figures table of docs/reliability.md.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| figure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| seed | %d |\n| guarantee | %s |\n| cycles | %d |\n| elapsed | %s |\n", r.Seed, r.Guarantee, r.Cycles, r.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "| records produced (valid + malformed) | %d |\n", r.Records)
	for _, f := range SortedKeys(r.Faults) {
		fmt.Fprintf(&b, "| fault: %s | %d |\n", f, r.Faults[f])
	}
	for _, kd := range SortedKeys(r.Kills) {
		fmt.Fprintf(&b, "| process end: %s | %d |\n", kd, r.Kills[kd])
	}
	if rep := r.Report; rep != nil {
		for _, row := range []struct {
			name string
			v    int
		}{
			{"valid events produced", rep.Produced}, {"malformed records produced", rep.Malformed}, {"keys", rep.Keys},
			{"events table rows", rep.EventsRows}, {"state table rows", rep.StateRows},
			{"**lost**", rep.Lost}, {"**duplicated**", rep.Duplicated}, {"**stale (state older than newest version)**", rep.Stale},
			{"corrupt (checksum/payload mismatch)", rep.Corrupt}, {"unexpected rows", rep.Unexpected},
			{"malformed missing from dead-letter topic", rep.DeadLetterMissing},
			{"**lingering PREPARE/PRECOMMITTED txns**", rep.Lingering}, {"ledger ↔ Doris mismatches", rep.LedgerMismatch},
			{"ledger labels expired in Doris (info)", rep.LedgerExpired}, {"checkpoints healed", rep.Healed},
			{"checkpoints resolved by operator", rep.Resolved},
		} {
			fmt.Fprintf(&b, "| %s | %d |\n", row.name, row.v)
		}
	}
	fmt.Fprintf(&b, "| protocol problems | %d |\n", len(r.Problems))
	return b.String()
}
