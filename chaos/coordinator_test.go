package chaos

import (
	"flag"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// flagKafkaCycles bounds TestCampaignKafkaCoordinator (16 in CI).
var flagKafkaCycles = flag.Int("chaos.kafka.cycles", 16, "faults injected by TestCampaignKafkaCoordinator")

// TestCampaignKafkaCoordinator runs the campaign with job.coordinator:
// kafka (decisions in the state topic, fenced by Kafka transactions): the
// whole fault table, label-expiry-while-down included (its way out,
// `checkpoint resolve`, writes an operator record to the state topic that
// the job applies at its next start). Kafka restarts are in the table (the
// state topic, the producer epochs and the group offsets must survive
// them).
func TestCampaignKafkaCoordinator(t *testing.T) {
	t.Parallel()
	res := runCampaign(t, Config{Seed: *flagSeed, Cycles: *flagKafkaCycles, Guarantee: "exactly-once",
		Coordinator: "kafka", Scenarios: Scenarios})
	requireClean(t, res)
	if res.Report.Produced == 0 || res.Report.EventsRows == 0 {
		t.Errorf("seed=%d: nothing produced or loaded: %s", res.Seed, res.Report)
	}
}

// flagFileCycles bounds TestCampaignFileCoordinator (16 in CI).
var flagFileCycles = flag.Int("chaos.file.cycles", 16, "faults injected by TestCampaignFileCoordinator")

// TestCampaignFileCoordinator runs the campaign with job.coordinator: file
// (the checkpoint store in job.data_dir), which stays selectable now that
// kafka is the default: the whole fault table.
func TestCampaignFileCoordinator(t *testing.T) {
	t.Parallel()
	res := runCampaign(t, Config{Seed: *flagSeed, Cycles: *flagFileCycles, Guarantee: "exactly-once",
		Coordinator: "file", Scenarios: Scenarios})
	requireClean(t, res)
	if res.Report.Produced == 0 || res.Report.EventsRows == 0 {
		t.Errorf("seed=%d: nothing produced or loaded: %s", res.Seed, res.Report)
	}
}

// TestScenarioKafkaCoordinatorEveryFailpoint crashes at every failpoint and
// restarts the Kafka broker twice (mid-load, same data dir), with
// job.coordinator: kafka: the state topic, the producer epochs and the
// group offsets survive the restarts, and every record is loaded once.
func TestScenarioKafkaCoordinatorEveryFailpoint(t *testing.T) {
	t.Parallel()
	steps := []Step{{Kind: KafkaRestart, Events: 120, Delay: 200}}
	for _, fp := range loader.AllFailpoints {
		steps = append(steps, Step{Kind: KillFailpoint, Failpoint: fp, Events: 90})
	}
	steps = append(steps, Step{Kind: KafkaRestart, Events: 120, Delay: 50}, Step{Kind: KillRandom, Events: 100, Delay: 150})
	for i := range steps {
		steps[i].Cycle = i + 1
	}
	res := runCampaign(t, Config{Seed: 1, Cycles: len(steps), Guarantee: "exactly-once", Coordinator: "kafka", Plan: steps})
	requireClean(t, res)
	if res.Faults[KafkaRestart] != 2 {
		t.Errorf("kafka restarts %d, want 2", res.Faults[KafkaRestart])
	}
}

// TestScenarioKafkaLabelExpiryWhileDown is label-expiry-while-down with
// job.coordinator kafka, both ways out: after-decide (the txn timed out:
// --assume aborted, the next start heals) and after-commit-before-ledger
// (committed: --assume visible, the next start moves on). `checkpoint
// resolve` writes an operator record to the state topic (it never opens
// the job's transactional id); the restarted job applies it, records it in
// its ledger, and every record is loaded once.
func TestScenarioKafkaLabelExpiryWhileDown(t *testing.T) {
	t.Parallel()
	steps := []Step{{Kind: LabelExpiry, Failpoint: loader.FailAfterDecide, Events: 100},
		{Kind: LabelExpiry, Failpoint: loader.FailAfterCommitBeforeLedger, Events: 100}}
	for i := range steps {
		steps[i].Cycle = i + 1
	}
	res := runCampaign(t, Config{Seed: 1, Cycles: len(steps), Guarantee: "exactly-once", Coordinator: "kafka", Plan: steps})
	if got := res.Kills["refused:label-expired"]; got != 4 {
		t.Errorf("refusals after label expiry = %d, want 4 (two per sink); kills %v", got, res.Kills)
	}
	if res.Report.Resolved != 4 || res.Report.Healed != 2 {
		t.Errorf("resolved %d healed %d, want 4 and 2: %s", res.Report.Resolved, res.Report.Healed, res.Report)
	}
	requireClean(t, res)
}
