package chaos

import (
	"flag"
	"slices"
	"testing"

	"github.com/doris-sink/doris-sink/loader"
)

// flagKafkaCycles bounds TestCampaignKafkaCoordinator (16 in CI).
var flagKafkaCycles = flag.Int("chaos.kafka.cycles", 16, "faults injected by TestCampaignKafkaCoordinator")

// TestCampaignKafkaCoordinator runs the campaign with job.coordinator:
// kafka (decisions in the state topic, fenced by Kafka transactions): the
// fault table minus label-expiry-while-down, whose way out (`checkpoint
// resolve`) does not write through the Kafka log yet (docs/design.md
// §7.1). Kafka restarts are in the table (the state topic, the producer
// epochs and the group offsets must survive them).
func TestCampaignKafkaCoordinator(t *testing.T) {
	t.Parallel()
	scen := slices.DeleteFunc(slices.Clone(Scenarios), func(s Scenario) bool { return s.Kind == LabelExpiry })
	res := runCampaign(t, Config{Seed: *flagSeed, Cycles: *flagKafkaCycles, Guarantee: "exactly-once",
		Coordinator: "kafka", Scenarios: scen})
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
