package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/doris-sink/doris-sink/loader"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// Group-mode fault kinds (GroupScenarios). A group campaign keeps its
// members running across cycles: each cycle produces events, changes the
// membership or freezes a member, and waits until the group as a whole
// has decided every record produced (the per-partition maximum over the
// members' "checkpoint decided" lines), with the group stable again.
const (
	// MemberKill SIGKILLs a random member at a random moment; with fewer
	// than GroupConfig.MinMembers left a replacement starts.
	MemberKill FaultKind = "member-kill-random"
	// MemberFailpoint SIGKILLs a random member and starts its replacement
	// with a crash armed at a named failpoint (DORIS_SINK_FAILPOINTS); a
	// replacement that never reaches it (a standby, or nothing left to
	// load) is SIGKILLed once everything is decided.
	MemberFailpoint FaultKind = "member-kill-failpoint"
	// MemberZombie SIGSTOPs a random member past the session timeout
	// (until the group has moved its slots and decided everything without
	// it), then SIGCONTs it: it wakes up believing it owns its slots, and
	// every write it then attempts must be refused (producer epoch,
	// generation), never a duplicate.
	MemberZombie FaultKind = "member-pause-past-session-timeout"
	// MemberAdd starts one more member (up to MaxMembers).
	MemberAdd FaultKind = "member-add"
	// MemberRemove SIGTERMs a random member (down to MinMembers): it must
	// drain its slots and exit 0.
	MemberRemove FaultKind = "member-remove-sigterm"
	// RebalanceKafkaRestart adds or removes a member and restarts the
	// broker while the group rebalances.
	RebalanceKafkaRestart FaultKind = "kafka-restart-during-rebalance"
	// MemberZombieInRebalance (issue 29): a member stays in the group but
	// neither learns of a rebalance nor rejoins (its own group requests
	// are held at the broker, its session kept alive on its behalf, as
	// for a member slow in its hand-over) until the others have waited in
	// their JoinGroup past their session timeout; then it is SIGSTOPped
	// (a zombie) and resumed once the group moved on without it.
	MemberZombieInRebalance FaultKind = "member-pause-during-rebalance"
)

// GroupScenarios is the group campaign's fault table.
var GroupScenarios = []Scenario{
	{MemberKill, 6, false, "SIGKILL a random member at a random moment; its slots move after the session timeout"},
	{MemberFailpoint, 5, false, "SIGKILL a random member; its replacement crashes at a named failpoint (K+crash) once it owns a slot"},
	{MemberZombie, 8, false, "SIGSTOP a member past the session timeout, SIGCONT it once the group moved on: it must be fenced"},
	{MemberZombieInRebalance, 6, false, "a member slow to rejoin holds a rebalance past the others' session timeout, then is SIGSTOPped past its own (issue 29)"},
	{MemberAdd, 3, false, "start one more member (cooperative rebalance: only moving slots drain)"},
	{MemberRemove, 3, false, "SIGTERM a member: it drains its slots and leaves, exit 0"},
	{RebalanceKafkaRestart, 2, false, "add or remove a member and restart the Kafka broker during the rebalance"},
}

// EveryGroupFault is a plan of every group fault kind once, in an order
// that lets each happen from 3 members (a removal needs more than
// MinMembers): a zombie, a removal, an addition, a replacement crashing
// after-decide, a random kill, a broker restart during a rebalance, a
// member slow to rejoin frozen during a rebalance.
func EveryGroupFault() []Step {
	steps := []Step{
		{Kind: MemberZombie, Events: 150, Delay: 300},
		{Kind: MemberRemove, Events: 100, Delay: 200},
		{Kind: MemberAdd, Events: 100, Delay: 100},
		{Kind: MemberFailpoint, Failpoint: loader.FailAfterDecide, Events: 100, Delay: 100},
		{Kind: MemberKill, Events: 120, Delay: 400},
		{Kind: RebalanceKafkaRestart, Events: 100, Delay: 50},
		{Kind: MemberZombieInRebalance, Events: 100, Delay: 100},
	}
	for i := range steps {
		steps[i].Cycle = i + 1
	}
	return steps
}

// GroupConfig configures a group-mode campaign: Members copies of one job
// config (each with its own data dir, as on separate machines) sharing
// Slots writer slots over Partitions source partitions.
type GroupConfig struct {
	// Binary is the doris-sink executable; Dir holds everything.
	Binary, Dir string
	// Seed determines the plan, the history and which member is hit.
	Seed uint64
	// Cycles is the number of faults (Plan(Seed, Cycles, GroupScenarios)).
	Cycles int
	// Plan, when set, replaces the drawn plan.
	Plan []Step
	// Slots is job.slots (default 4). 1 is a one-slot job (a group of one
	// writer slot: a second copy is a standby; issue 22), used to test the
	// harness itself.
	Slots int
	// Members is how many members start (default 3); MinMembers and
	// MaxMembers bound the membership during the cycles (default 2 and
	// Slots; 1 and 1 when Slots is 1).
	Members, MinMembers, MaxMembers int
	// Partitions of the source topic (default 8).
	Partitions int
	// SessionTimeout is kafka.session_timeout (default 6 s, kfake's
	// minimum is lowered to 1 s); RebalanceTimeout kafka.rebalance_timeout
	// (default 10 s).
	SessionTimeout, RebalanceTimeout time.Duration
	// LivenessMargin is what LivenessBound allows beyond the session and
	// rebalance timeouts for the moved slots' jobs to start and decide
	// (default 5 s).
	LivenessMargin time.Duration
	// Keys is the number of distinct keys (default 50).
	Keys int
	// Timeout bounds each wait for progress (default 90 s).
	Timeout time.Duration
	// Logf receives one line per cycle; nil: none.
	Logf func(format string, args ...any)
}

// GroupResult is a group campaign's outcome: the group-mode figures of
// docs/reliability.md.
type GroupResult struct {
	Seed   uint64
	Cycles int
	Slots  int
	Plan   []Step
	Faults map[FaultKind]int
	// Kills counts member ends by cause ("sigkill", "failpoint:<name>",
	// "failpoint-not-reached", "drain", "zombie-exit:<code>").
	Kills map[string]int
	// MembersStarted counts every member process started; MaxLive the most
	// running at once.
	MembersStarted, MaxLive int
	// Rebalances counts the group changes the harness caused and saw
	// settle (a member joined, left or was evicted, the broker restarted),
	// each waited on until the group was stable again; Generations the
	// distinct group generations members logged slots assigned in (the
	// rebalances the broker ran; a cooperative rebalance takes two).
	Rebalances, Generations int
	// SlotsLost counts "slots lost" lines (a member that learnt it was
	// evicted: a zombie waking up, a member cut off by a broker restart).
	SlotsLost int
	// Zombies counts members paused past the session timeout and resumed;
	// ZombiesFenced those that, once resumed, decided nothing the group
	// had already decided (every one of them must be). StaleDecisions
	// counts the zombie decisions that overlapped another member's (0).
	Zombies, ZombiesFenced, StaleDecisions int
	// LivenessMax is the longest a cycle took from its last fault to
	// deciding everything produced before it; LivenessViolations counts
	// the cycles past GroupConfig.LivenessBound, SessionFailures the
	// failed group sessions of members neither paused nor cut off by a
	// broker restart (both must be 0).
	LivenessMax                         time.Duration
	LivenessViolations, SessionFailures int
	Records                             int64
	Report                              *Report
	Problems                            []string
	Elapsed                             time.Duration
}

// Failed reports whether the campaign broke a promise.
func (r *GroupResult) Failed() bool {
	return len(r.Problems) > 0 || r.Report == nil || r.Report.Violations(true) > 0 || r.StaleDecisions > 0 ||
		r.LivenessViolations > 0 || r.SessionFailures > 0
}

// member is one running copy of the job.
type member struct {
	id  int
	p   *Process
	cfg string
	// zombie: paused past the session timeout and resumed; it may exit
	// (non-zero, fenced) at any time afterwards.
	zombie bool
	// counted: its exit is in GroupResult.Kills.
	counted bool
}

// groupCampaign is one running group campaign.
type groupCampaign struct {
	cfg    GroupConfig
	c      *Cluster
	sink   *Sink // the job as the checker sees it: DataDir is the parent of every member's
	hist   *History
	rng    *rand.Rand // history
	pick   *rand.Rand // which member a fault hits
	res    *GroupResult
	live   []*member
	all    []*member // every member ever started (their decisions count)
	nextID int
	// records is the sum of the source partitions' end offsets.
	records int64

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on any member's log line or exit

	// faultAt is the time of the cycle's last fault (zero: none pending a
	// liveness check), faultRecords what was produced then, outOfGroup
	// the live members' failed-session counts then (loader/kafka/group liveness.go).
	faultAt      time.Time
	faultRecords int64
	outOfGroup   map[*member]int
}

// RunGroup runs a group-mode campaign: it starts the cluster and
// cfg.Members members, runs the plan, drains every member and checks. It
// returns an error only when the harness itself fails.
func RunGroup(ctx context.Context, cfg GroupConfig) (*GroupResult, error) {
	cfg = groupDefaults(cfg)
	start := time.Now()
	res := &GroupResult{Seed: cfg.Seed, Cycles: cfg.Cycles, Slots: cfg.Slots, Faults: map[FaultKind]int{}, Kills: map[string]int{}}
	res.Plan = cfg.Plan
	if res.Plan == nil {
		res.Plan = Plan(cfg.Seed, cfg.Cycles, GroupScenarios, true)
	}
	cl, err := NewClusterWith(filepath.Join(cfg.Dir, "kafka"), ClusterOptions{Partitions: cfg.Partitions, MinSessionTimeout: time.Second})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	g := &groupCampaign{cfg: cfg, c: cl, hist: NewHistory(cfg.Keys), rng: newRand(cfg.Seed, 1), pick: newRand(cfg.Seed, 2),
		res: res, changed: make(chan struct{})}
	g.sink = &Sink{Name: groupJob, Table: EventsTable, DataDir: filepath.Join(cfg.Dir, groupJob)}
	defer g.killAll()
	for range cfg.Members {
		if _, err := g.startMember(); err != nil {
			return nil, err
		}
	}
	if err := g.settle(ctx, "start"); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("seed=%d start: %v", cfg.Seed, err))
	}
	for _, st := range res.Plan {
		if len(res.Problems) > 0 {
			break // a broken group makes every later cycle's figures meaningless
		}
		res.Faults[st.Kind]++
		cfg.Logf("seed=%d %s (members %d)", cfg.Seed, st, len(g.live))
		if err := g.cycle(ctx, st); err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("seed=%d %s: %v", cfg.Seed, st, err))
			cfg.Logf("seed=%d PROBLEM %s: %v", cfg.Seed, st, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := g.drainAll(ctx); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("seed=%d final drain: %v", cfg.Seed, err))
	}
	res.Records = g.records
	gens := map[int64]bool{}
	for _, m := range g.all {
		for _, gen := range m.p.Generations() {
			gens[gen] = true
		}
		res.SlotsLost += m.p.Count(msgSlotsLost)
	}
	res.Generations = len(gens)
	chk := &Checker{Brokers: cl.Brokers(), MySQL: cl.Doris.MySQLAddr(), User: "root", Events: g.sink, ExactlyOnce: true}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rep, err := chk.Check(cctx)
	if err != nil {
		return res, fmt.Errorf("seed=%d check: %w", cfg.Seed, err)
	}
	res.Report = rep
	// The evidence is in Kafka: verify from a config whose job.data_dir is
	// empty (no member's machine) must reconcile the whole job.
	if out, code, err := g.verifyWithoutDataDir(cctx); err != nil {
		return res, fmt.Errorf("seed=%d verify: %w", cfg.Seed, err)
	} else if code != 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("seed=%d verify from a config with an empty job.data_dir exited %d: %s",
			cfg.Seed, code, out))
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// verifyWithoutDataDir runs `doris-sink verify` with the job's config and
// a fresh, empty job.data_dir; it returns the command's output tail and
// exit code.
func (g *groupCampaign) verifyWithoutDataDir(ctx context.Context) (string, int, error) {
	path, _, err := g.memberConfig(1 << 20) // a member id no member has: an empty data dir
	if err != nil {
		return "", 0, err
	}
	return runVerify(ctx, g.cfg.Binary, path)
}

// runVerify runs `binary verify -c config` and returns the tail of its
// output and its exit code (an error only when it could not run).
func runVerify(ctx context.Context, binary, config string) (string, int, error) {
	out, err := exec.CommandContext(ctx, binary, "verify", "-c", config).CombinedOutput()
	tail := string(out)
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return tail, ee.ExitCode(), nil
	}
	if err != nil {
		return tail, 0, fmt.Errorf("run verify: %w", err)
	}
	return tail, 0, nil
}

// groupJob is the job name (label prefix, consumer group) of a group
// campaign.
const groupJob = "chaos-group"

func groupDefaults(cfg GroupConfig) GroupConfig {
	if cfg.Slots == 0 {
		cfg.Slots = 4
	}
	if cfg.Members == 0 {
		cfg.Members = min(3, cfg.Slots)
	}
	if cfg.MinMembers == 0 {
		cfg.MinMembers = min(2, cfg.Members)
	}
	if cfg.MaxMembers == 0 {
		cfg.MaxMembers = max(cfg.Slots, cfg.Members)
	}
	if cfg.Slots == 1 {
		// The owner and a standby (issue 22).
		cfg.Members, cfg.MinMembers, cfg.MaxMembers = 2, 1, 2
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = 8
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 6 * time.Second
	}
	if cfg.RebalanceTimeout == 0 {
		cfg.RebalanceTimeout = 10 * time.Second
	}
	if cfg.LivenessMargin == 0 {
		cfg.LivenessMargin = 5 * time.Second
	}
	if cfg.Keys == 0 {
		cfg.Keys = 50
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 90 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return cfg
}

// cycle runs one planned step with the members running, and leaves the
// group settled: membership within bounds, stable, everything decided.
func (g *groupCampaign) cycle(ctx context.Context, st Step) error {
	if err := g.produce(ctx, st.Events); err != nil {
		return err
	}
	sleep(ctx, time.Duration(st.Delay)*time.Millisecond) // the fault's moment, while the members load
	switch st.Kind {
	case MemberKill:
		g.kill(g.victim(st))
		if err := g.faulted(ctx); err != nil {
			return err
		}
	case MemberFailpoint:
		g.kill(g.victim(st))
		spec := fmt.Sprintf("%s=%d+crash", st.Failpoint, st.Skip)
		m, err := g.startMember("DORIS_SINK_FAILPOINTS=" + spec)
		if err != nil {
			return err
		}
		return g.failpoint(ctx, m, st.Failpoint, st.Events)
	case MemberZombie:
		return g.zombie(ctx, g.victim(st))
	case MemberZombieInRebalance:
		return g.zombieInRebalance(ctx, g.victim(st))
	case MemberAdd:
		if len(g.live) < g.cfg.MaxMembers {
			if _, err := g.startMember(); err != nil {
				return err
			}
			if err := g.faulted(ctx); err != nil {
				return err
			}
		}
	case MemberRemove:
		if len(g.live) > g.cfg.MinMembers {
			if err := g.faulted(ctx); err != nil {
				return err
			}
			if err := g.remove(ctx, g.victim(st)); err != nil {
				return err
			}
		}
	case RebalanceKafkaRestart:
		if len(g.live) < g.cfg.MaxMembers {
			m, err := g.startMember()
			if err != nil {
				return err
			}
			// Restart once it is joining (its startup checks done): the
			// broker goes away in the middle of the rebalance it causes.
			if err := g.joining(ctx, m); err != nil {
				return err
			}
		} else if err := g.remove(ctx, g.victim(st)); err != nil {
			return err
		}
		if err := g.c.RestartKafka(); err != nil {
			return err
		}
		if err := g.faulted(ctx); err != nil {
			return err
		}
		g.rebalanced() // the broker restart: every member reconnects and rejoins
		if err := g.produce(ctx, st.Events/2+1); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown group fault kind %q", st.Kind)
	}
	return g.settle(ctx, string(st.Kind))
}

// joining waits until m logs that it joins the group (or that it
// recovered).
func (g *groupCampaign) joining(ctx context.Context, m *member) error {
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	err := m.p.waitFor(wctx, func() bool { return m.p.countLocked(msgJoining) > 0 || m.p.ready })
	if err != nil {
		return g.memberErr(m, "join the group", err)
	}
	return nil
}

// victim picks the live member a step hits.
func (g *groupCampaign) victim(st Step) *member {
	_ = st
	return g.live[g.pick.IntN(len(g.live))]
}

// memberConfig writes member id's config: the job's config with the
// member's own data dir.
func (g *groupCampaign) memberConfig(id int) (string, string, error) {
	dir := filepath.Join(g.sink.DataDir, fmt.Sprintf("m%d", id))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("member %d: %w", id, err)
	}
	data := filepath.Join(dir, "data")
	// Every member is a group member (job.slots 1 too: issue 22).
	job := fmt.Sprintf("job: { name: %s, data_dir: %s, slots: %d }\n", groupJob, data, g.cfg.Slots)
	kafka := fmt.Sprintf("kafka: { brokers: [%s], topic: %s, group: %s, start: earliest, session_timeout: %s, rebalance_timeout: %s }\n",
		g.c.Brokers(), Topic, groupJob, g.cfg.SessionTimeout, g.cfg.RebalanceTimeout)
	cfg := job + kafka +
		fmt.Sprintf("doris: { fe: [%s], mysql: %s, user: root, database: %s, table: %s, format: json }\n",
			g.c.Doris.FEURL(), g.c.Doris.MySQLAddr(), Database, EventsTable) +
		"delivery: { guarantee: exactly-once, checkpoint_interval: 150ms, checkpoint_max_rows: 60 }\n" +
		"records: { format: json }\nmetrics: { listen: \"\" }\nlog: { format: json, level: info }\n"
	path := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", "", fmt.Errorf("member %d: %w", id, err)
	}
	return path, data, nil
}

// startMember starts one more copy of the job.
func (g *groupCampaign) startMember(env ...string) (*member, error) {
	g.nextID++
	path, _, err := g.memberConfig(g.nextID)
	if err != nil {
		return nil, err
	}
	p, err := startProcess(g.cfg.Binary, []string{"run", "-c", path}, g.notify, env...)
	if err != nil {
		return nil, err
	}
	m := &member{id: g.nextID, p: p, cfg: path}
	g.live = append(g.live, m)
	g.all = append(g.all, m)
	g.res.MembersStarted++
	g.res.MaxLive = max(g.res.MaxLive, len(g.live))
	if g.nextID > 1 {
		g.rebalanced() // a join
	}
	return m, nil
}

// rebalanced counts a group change the harness caused.
func (g *groupCampaign) rebalanced() {
	g.res.Rebalances++
}

func (g *groupCampaign) notify() {
	g.mu.Lock()
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

// dropLive removes m from the live members.
func (g *groupCampaign) dropLive(m *member) {
	for i, x := range g.live {
		if x == m {
			g.live = append(g.live[:i], g.live[i+1:]...)
			return
		}
	}
}

// kill SIGKILLs m (its slots move after the session timeout).
func (g *groupCampaign) kill(m *member) {
	m.p.Kill()
	g.dropLive(m)
	g.res.Kills["sigkill"]++
	g.rebalanced()
}

// remove SIGTERMs m, which must drain and exit 0.
func (g *groupCampaign) remove(ctx context.Context, m *member) error {
	m.p.Signal(syscall.SIGTERM)
	g.dropLive(m)
	g.rebalanced()
	code, err := g.exit(ctx, m)
	if err != nil {
		m.p.Kill()
		return g.memberErr(m, "drain after SIGTERM", err)
	}
	g.res.Kills["drain"]++
	if code != 0 {
		return g.memberErr(m, "drain after SIGTERM", fmt.Errorf("exit code %d, want 0", code))
	}
	return nil
}

func (g *groupCampaign) exit(ctx context.Context, m *member) (int, error) {
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	return m.p.Wait(wctx)
}

func (g *groupCampaign) memberErr(m *member, what string, err error) error {
	return fmt.Errorf("member %d (%s): %s: %w\n--- last log lines ---\n%s", m.id, m.cfg, what, err, m.p.Tail(15))
}

// failpoint waits for the armed member m to crash at name (exit 137):
// once it owns a slot (group mode), events are produced until it gets
// there (at most failpointRounds rounds of events events, each waited on
// until decided). When it never does (a standby, or the failpoint not on
// its path) it is SIGKILLed once everything is decided.
func (g *groupCampaign) failpoint(ctx context.Context, m *member, name string, events int) error {
	if err := g.restore(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	_ = m.p.waitFor(wctx, func() bool { return m.p.countLocked(msgSlotJobRunning) > 0 })
	cancel()
	var err error
	for round := 0; round < failpointRounds && !m.p.Exited(); round++ {
		if round > 0 {
			if err = g.produce(ctx, events); err != nil {
				return err
			}
		}
		if err = g.waitDecided(ctx, func() bool { return m.p.Exited() }); err != nil {
			break
		}
	}
	if !m.p.Exited() {
		if err != nil {
			return err
		}
		g.kill(m)
		if err := g.faulted(ctx); err != nil {
			return err
		}
		g.res.Kills["sigkill"]--
		g.res.Kills["failpoint-not-reached"]++
		return g.settle(ctx, string(MemberFailpoint))
	}
	g.dropLive(m)
	code, werr := m.p.Wait(ctx)
	if werr != nil {
		return werr
	}
	if code != 137 {
		return g.memberErr(m, "failpoint "+name, fmt.Errorf("exit code %d, want 137 (crash)", code))
	}
	g.res.Kills["failpoint:"+name]++
	if err := g.faulted(ctx); err != nil {
		return err
	}
	g.rebalanced()
	return g.settle(ctx, string(MemberFailpoint))
}

// failpointRounds bounds how many rounds of events an armed member gets
// to reach its failpoint.
const failpointRounds = 4

// zombie freezes m past the session timeout, lets the group move on and
// decide everything without it, then resumes it: whatever it decides
// afterwards must not overlap what the group decided meanwhile.
func (g *groupCampaign) zombie(ctx context.Context, m *member) error {
	m.p.Pause()
	return g.paused(ctx, m, nil)
}

// paused runs the rest of a zombie fault on m, SIGSTOPped just now;
// onResume, if set, runs right before its SIGCONT.
func (g *groupCampaign) paused(ctx context.Context, m *member, onResume func()) error {
	g.dropLive(m)
	g.res.Zombies++
	if err := g.faulted(ctx); err != nil {
		m.p.Resume()
		m.p.Kill()
		return err
	}
	g.rebalanced()
	if len(g.live) < g.cfg.MinMembers {
		// Standalone (Slots 1): the replacement fences the frozen copy.
		if _, err := g.startMember(); err != nil {
			m.p.Resume()
			m.p.Kill()
			return err
		}
	}
	if err := g.settle(ctx, "zombie paused"); err != nil {
		m.p.Resume()
		m.p.Kill()
		return err
	}
	decided := g.othersDecided(m)
	mark := m.p.Mark()
	before := map[string]int{}
	for _, msg := range zombieSigns {
		before[msg] = m.p.Count(msg)
	}
	if onResume != nil {
		onResume()
	}
	m.p.Resume()
	if err := g.faulted(ctx); err != nil {
		m.p.Kill()
		return err
	}
	// The zombie's view is stale by now: more records arrive, it runs
	// until everything is decided again (by whoever owns the slots).
	if err := g.produce(ctx, 30); err != nil {
		m.p.Kill()
		return err
	}
	m.zombie = true
	// It may rejoin the group as a member (its old session is gone; with
	// one slot, as a standby) or exit fenced: settle counts it while it
	// runs.
	g.live = append(g.live, m)
	err := g.settle(ctx, "zombie resumed")
	// A decision the zombie logs after SIGCONT is stale when its range
	// overlaps one another member decided: a decision whose Kafka
	// transaction committed just before the SIGSTOP (logged only after the
	// SIGCONT) is the base the group built on, not an overlap.
	stale := 0
	others := g.othersDecisions(m)
	for _, d := range m.p.DecisionsSince(mark) {
		for part, start := range d.Start {
			end, ok := d.End[part]
			if !ok || end <= start {
				continue
			}
			for _, o := range others {
				if os, oe := o.Start[part], o.End[part]; oe > os && start < oe && os < end {
					stale++
					break
				}
			}
		}
	}
	signs := ""
	for _, msg := range zombieSigns {
		if n := m.p.Count(msg) - before[msg]; n > 0 {
			signs += fmt.Sprintf(" %q×%d", msg, n)
		}
	}
	g.cfg.Logf("seed=%d zombie member %d after SIGCONT: %d decisions, exited %v;%s", g.cfg.Seed, m.id,
		len(m.p.DecisionsSince(mark)), m.p.Exited(), signs)
	g.res.StaleDecisions += stale
	if stale == 0 {
		g.res.ZombiesFenced++
	}
	if m.p.Exited() {
		g.zombieExited(ctx, m)
	}
	if stale > 0 {
		err = errors.Join(err, g.memberErr(m, "zombie", fmt.Errorf("%d decisions after resume overlap ranges the group decided meanwhile %v", stale, decided)))
	}
	return err
}

// zombieSigns are the log lines that show how a resumed zombie learnt it
// was fenced (logged per zombie).
var zombieSigns = []string{msgSlotsLost, "group mode: slots revoked", "group mode: slot decision refused",
	"group mode: slot no longer owned", "checkpoint failed", msgSlotsAssigned, "group mode: a slot job failed"}

// zombieExited records the exit of a resumed zombie (fenced: non-zero is
// what it must do; 0 would claim a drain nobody asked for).
func (g *groupCampaign) zombieExited(ctx context.Context, m *member) {
	if m.zombie && m.p.Exited() && !m.counted {
		m.counted = true
		g.dropLive(m)
		code, _ := m.p.Wait(ctx)
		g.res.Kills[fmt.Sprintf("zombie-exit:%d", code)]++
		g.cfg.Logf("seed=%d zombie member %d exited %d: %s", g.cfg.Seed, m.id, code, m.p.Tail(1))
		if code == 0 {
			g.res.Problems = append(g.res.Problems, g.memberErr(m, "zombie", errors.New("exited 0 on its own after it was fenced")).Error())
		}
	}
}

// othersDecisions returns every decision the members other than m logged.
func (g *groupCampaign) othersDecisions(m *member) []Decision {
	var out []Decision
	for _, x := range g.all {
		if x != m {
			out = append(out, x.p.DecisionsSince(-1)...)
		}
	}
	return out
}

// othersDecided is the per-partition decided offset of every member but
// m.
func (g *groupCampaign) othersDecided(m *member) map[string]int64 {
	out := map[string]int64{}
	for _, x := range g.all {
		if x == m {
			continue
		}
		for k, v := range x.p.Partitions() {
			out[k] = max(out[k], v)
		}
	}
	return out
}

// decided is the group's decided offset sum: per partition the highest
// decided offset any member ever logged.
func (g *groupCampaign) decided() int64 {
	per := map[string]int64{}
	for _, m := range g.all {
		for k, v := range m.p.Partitions() {
			per[k] = max(per[k], v)
		}
	}
	var n int64
	for _, v := range per {
		n += v
	}
	return n
}

// restore starts members until MinMembers run.
func (g *groupCampaign) restore() error {
	for len(g.live) < g.cfg.MinMembers {
		if _, err := g.startMember(); err != nil {
			return err
		}
	}
	return nil
}

// settle brings the membership back within bounds, waits until the group
// is stable with every live member and every slot assigned, and until every record produced is decided. A member that exits on its
// own meanwhile is a problem (named with its log).
func (g *groupCampaign) settle(ctx context.Context, what string) error {
	if err := g.restore(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	err := waitGroupStable(wctx, g.c.Brokers(), groupJob, coordlog.SlotTopic(groupJob), g.cfg.Slots, func() (int, error) {
		for _, m := range append([]*member(nil), g.live...) {
			if m.zombie {
				g.zombieExited(ctx, m)
			} else if m.p.Exited() {
				code, _ := m.p.Wait(ctx)
				g.dropLive(m)
				return 0, g.memberErr(m, "exited on its own", fmt.Errorf("exit code %d", code))
			}
		}
		return len(g.live), nil
	})
	cancel()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := g.waitDecided(ctx, nil); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return g.checkLiveness(what, what == string(RebalanceKafkaRestart))
}

// waitDecided waits until the group decided every record produced, or
// until stop holds; a live member that exits meanwhile is an error.
func (g *groupCampaign) waitDecided(ctx context.Context, stop func() bool) error {
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	for {
		g.mu.Lock()
		ch := g.changed
		g.mu.Unlock()
		if stop != nil && stop() {
			return nil
		}
		for _, m := range append([]*member(nil), g.live...) {
			if m.zombie {
				g.zombieExited(ctx, m)
				continue
			}
			if m.p.Exited() && (stop == nil || !stop()) {
				code, _ := m.p.Wait(ctx)
				g.dropLive(m)
				return g.memberErr(m, "exited on its own", fmt.Errorf("exit code %d", code))
			}
		}
		if g.decided() >= g.records {
			return nil
		}
		select {
		case <-ch:
		case <-wctx.Done():
			return fmt.Errorf("no checkpoint decided up to offset sum %d (group has %d) with %d members: %w",
				g.records, g.decided(), len(g.live), wctx.Err())
		}
	}
}

// drainAll waits until everything is decided, SIGTERMs every member and
// expects exit 0 from each.
func (g *groupCampaign) drainAll(ctx context.Context) error {
	errs := []error{g.waitDecided(ctx, nil)}
	live := append([]*member(nil), g.live...)
	for _, m := range live {
		m.p.Signal(syscall.SIGTERM)
	}
	for _, m := range live {
		code, err := g.exit(ctx, m)
		g.dropLive(m)
		if err != nil {
			m.p.Kill()
			errs = append(errs, g.memberErr(m, "final drain", err))
			continue
		}
		g.res.Kills["drain"]++
		if code != 0 {
			errs = append(errs, g.memberErr(m, "final drain", fmt.Errorf("exit code %d, want 0", code)))
		}
	}
	return errors.Join(errs...)
}

func (g *groupCampaign) killAll() {
	for _, m := range g.all {
		m.p.Resume()
		m.p.Kill()
	}
}

// produce appends n events to the source topic.
func (g *groupCampaign) produce(ctx context.Context, n int) error {
	rs := make([]*kgo.Record, 0, n)
	for range n {
		e := g.hist.Next(g.rng)
		rs = append(rs, &kgo.Record{Key: e.KeyBytes(), Value: e.Encode()})
	}
	if err := g.c.Produce(ctx, rs...); err != nil {
		return err
	}
	g.records += int64(n)
	return nil
}

// Summary renders r as the group-mode figures table of
// docs/reliability.md.
func (r *GroupResult) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| figure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| seed | %d |\n| job.slots | %d |\n| cycles | %d |\n| elapsed | %s |\n", r.Seed, r.Slots, r.Cycles, r.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "| members started | %d |\n| most members at once | %d |\n| rebalances caused and settled | %d |\n",
		r.MembersStarted, r.MaxLive, r.Rebalances)
	fmt.Fprintf(&b, "| group generations with slots assigned | %d |\n| slots lost (evicted members learning it) | %d |\n",
		r.Generations, r.SlotsLost)
	fmt.Fprintf(&b, "| zombies (paused past the session timeout, resumed) | %d |\n| **zombies fenced** | %d |\n| zombie decisions overlapping the group's | %d |\n",
		r.Zombies, r.ZombiesFenced, r.StaleDecisions)
	fmt.Fprintf(&b, "| longest last fault → everything before it decided | %s |\n| **liveness violations** | %d |\n| failed group sessions of unpaused members | %d |\n",
		r.LivenessMax.Round(10*time.Millisecond), r.LivenessViolations, r.SessionFailures)
	fmt.Fprintf(&b, "| records produced | %d |\n", r.Records)
	for _, f := range SortedKeys(r.Faults) {
		fmt.Fprintf(&b, "| fault: %s | %d |\n", f, r.Faults[f])
	}
	for _, kd := range SortedKeys(r.Kills) {
		fmt.Fprintf(&b, "| member end: %s | %d |\n", kd, r.Kills[kd])
	}
	if rep := r.Report; rep != nil {
		fmt.Fprintf(&b, "| events table rows | %d |\n| **lost** | %d |\n| **duplicated** | %d |\n| corrupt | %d |\n| unexpected rows | %d |\n",
			rep.EventsRows, rep.Lost, rep.Duplicated, rep.Corrupt, rep.Unexpected)
		fmt.Fprintf(&b, "| **lingering PREPARE/PRECOMMITTED txns** | %d |\n| ledger ↔ Doris mismatches | %d |\n| checkpoints healed | %d |\n",
			rep.Lingering, rep.LedgerMismatch, rep.Healed)
	}
	fmt.Fprintf(&b, "| protocol problems | %d |\n", len(r.Problems))
	return b.String()
}
