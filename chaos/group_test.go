package chaos

import (
	"flag"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/loader"
)

// Group campaign flags: go test ./chaos -run TestCampaignGroup -chaos.group.cycles=200 -timeout 3h
var (
	flagGroupCycles  = flag.Int("chaos.group.cycles", 10, "faults injected by TestCampaignGroup")
	flagGroupMembers = flag.Int("chaos.group.members", 3, "members TestCampaignGroup starts with")
	flagGroupSlots   = flag.Int("chaos.group.slots", 4, "job.slots of TestCampaignGroup")
)

// runGroup runs a group campaign and logs its figures; harness errors fail
// the test with the seed.
func runGroup(t *testing.T, cfg GroupConfig) *GroupResult {
	t.Helper()
	if cfg.Binary == "" {
		cfg.Binary = binary
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.Logf = t.Logf
	cfg = groupDefaults(cfg)
	t.Logf("group campaign: seed=%d cycles=%d slots=%d (replay: go test ./chaos -run %s -chaos.seed=%d -chaos.group.cycles=%d)",
		cfg.Seed, cfg.Cycles, cfg.Slots, t.Name(), cfg.Seed, cfg.Cycles)
	res, err := RunGroup(t.Context(), cfg)
	if err != nil {
		t.Fatalf("seed=%d: %v", cfg.Seed, err)
	}
	t.Logf("seed=%d figures:\n%s", cfg.Seed, res.Summary())
	return res
}

// requireGroupClean fails the test for every problem, checker violation
// and zombie decision that overlapped the group's.
func requireGroupClean(t *testing.T, res *GroupResult) {
	t.Helper()
	for _, p := range res.Problems {
		t.Errorf("seed=%d: %s", res.Seed, p)
	}
	if res.Report == nil {
		t.Fatalf("seed=%d: no checker report", res.Seed)
	}
	if n := res.Report.Violations(true); n > 0 {
		t.Errorf("seed=%d: checker found %d violations: %s", res.Seed, n, res.Report)
	}
	if res.StaleDecisions > 0 || res.ZombiesFenced != res.Zombies {
		t.Errorf("seed=%d: zombies %d, fenced %d, stale decisions %d", res.Seed, res.Zombies, res.ZombiesFenced, res.StaleDecisions)
	}
	if res.Report.Produced == 0 || res.Report.EventsRows == 0 {
		t.Errorf("seed=%d: nothing produced or loaded: %s", res.Seed, res.Report)
	}
}

// TestGroupHarnessOneSlot tests the group harness on a one-slot job (the
// default job.slots 1: its second copy is a standby, issue 22): a member
// killed at random, one crashing after-decide, a zombie frozen while the
// standby takes over (resumed, it must decide nothing that overlaps its
// successor's decisions), a SIGTERM drain with a broker restart. Every
// record exactly once, nothing lingering.
func TestGroupHarnessOneSlot(t *testing.T) {
	t.Parallel()
	steps := []Step{
		{Kind: MemberKill, Events: 120, Delay: 150},
		{Kind: MemberFailpoint, Failpoint: loader.FailAfterDecide, Events: 100},
		{Kind: MemberZombie, Events: 100, Delay: 100},
		{Kind: RebalanceKafkaRestart, Events: 80, Delay: 50},
	}
	for i := range steps {
		steps[i].Cycle = i + 1
	}
	res := runGroup(t, GroupConfig{Seed: 1, Slots: 1, Cycles: len(steps), Plan: steps, Timeout: time.Minute})
	requireGroupClean(t, res)
	if res.Zombies != 1 {
		t.Errorf("zombies %d, exits %v: want the frozen member counted as a zombie", res.Zombies, res.Kills)
	}
	if res.Kills["failpoint:"+loader.FailAfterDecide] != 1 {
		t.Errorf("crashes at %s: %v, want 1", loader.FailAfterDecide, res.Kills)
	}
}

// TestCampaignGroup is the group-mode campaign: 3 members (2 to 4 during
// the run) share 4 slots over 8 partitions while members are killed at
// random and at failpoints, frozen past the session timeout and resumed,
// added, removed, and the broker restarts during a rebalance. Its plan is
// every fault kind once (EveryGroupFault), then faults drawn from
// GroupScenarios up to -chaos.group.cycles (10 in CI, fixed seed).
func TestCampaignGroup(t *testing.T) {
	t.Parallel()
	plan := EveryGroupFault()
	plan = append(plan, Plan(*flagSeed, max(*flagGroupCycles-len(plan), 0), GroupScenarios, true)...)
	for i := range plan {
		plan[i].Cycle = i + 1
	}
	res := runGroup(t, GroupConfig{Seed: *flagSeed, Cycles: len(plan), Plan: plan, Slots: *flagGroupSlots, Members: *flagGroupMembers})
	requireGroupClean(t, res)
	for _, s := range GroupScenarios {
		if res.Faults[s.Kind] == 0 {
			t.Errorf("fault %s never ran: %v", s.Kind, res.Faults)
		}
	}
	if res.Zombies == 0 || res.Kills["failpoint:"+loader.FailAfterDecide] == 0 || res.Kills["drain"] == 0 {
		t.Errorf("zombies %d, member ends %v: the fixed steps did not all happen", res.Zombies, res.Kills)
	}
}
