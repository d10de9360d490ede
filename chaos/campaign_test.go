package chaos

import (
	"testing"
	"time"
)

// runCampaign runs a campaign and logs its figures; it fails the test with
// the seed when the harness fails.
func runCampaign(t *testing.T, cfg Config) *Result {
	t.Helper()
	if cfg.Binary == "" {
		cfg.Binary = binary
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.Logf = t.Logf
	t.Logf("chaos campaign: seed=%d cycles=%d guarantee=%s (replay: go test ./chaos -run %s -chaos.seed=%d -chaos.cycles=%d -chaos.mode=%s)",
		cfg.Seed, cfg.Cycles, cfg.Guarantee, t.Name(), cfg.Seed, cfg.Cycles, cfg.Guarantee)
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("seed=%d: %v", cfg.Seed, err)
	}
	t.Logf("seed=%d figures:\n%s", cfg.Seed, res.Summary())
	return res
}

// TestCampaign is the crash-and-fault campaign: in CI with the default
// flags (40 cycles, fixed seed), as a soak with -chaos.cycles=500.
// Exactly-once must end with nothing lost, duplicated, stale or lingering.
func TestCampaign(t *testing.T) {
	t.Parallel()
	res := runCampaign(t, Config{Seed: *flagSeed, Cycles: *flagCycles, Guarantee: *flagMode, Coordinator: *flagCoord,
		Format: *flagFormat})
	requireClean(t, res)
	if res.Report.Produced == 0 || res.Report.EventsRows == 0 {
		t.Errorf("seed=%d: nothing produced or loaded: %s", res.Seed, res.Report)
	}
}

// atLeastOnceSeed draws a plan whose cycles include a crash at
// after-precommit: under at-least-once that failpoint fires after the load
// committed and before its position is saved, so the replay duplicates.
const atLeastOnceSeed = 14

// TestCampaignAtLeastOnceCatchesDuplicates shows the checker can fail: the
// same campaign in at-least-once mode against the DUPLICATE KEY table must
// report duplicates > 0 (and still no loss).
func TestCampaignAtLeastOnceCatchesDuplicates(t *testing.T) {
	t.Parallel()
	const cycles = 6
	plan := Plan(atLeastOnceSeed, cycles, Scenarios, false)
	found := false
	for _, st := range plan {
		found = found || (st.Kind == KillFailpoint && st.Failpoint == "after-precommit")
	}
	if !found {
		t.Fatalf("seed %d: plan %v has no after-precommit crash; pick another atLeastOnceSeed", atLeastOnceSeed, plan)
	}
	res := runCampaign(t, Config{Seed: atLeastOnceSeed, Cycles: cycles, Guarantee: "at-least-once", Timeout: time.Minute})
	for _, p := range res.Problems {
		t.Errorf("seed=%d: %s", res.Seed, p)
	}
	if res.Report.Duplicated == 0 {
		t.Errorf("seed=%d: at-least-once campaign with a crash after a load: checker found no duplicates: %s", res.Seed, res.Report)
	}
	if res.Report.Lost != 0 || res.Report.Lingering != 0 {
		t.Errorf("seed=%d: at-least-once must not lose or leave txns: %s", res.Seed, res.Report)
	}
}

// TestCampaignTwoTopics runs the campaign with the events spread over two
// source topics (a key always in one) that both sinks read with
// kafka.topics, the events sink routing to three tables: every checkpoint
// covers the partitions of both topics and decides txns of several tables.
// Through the same crashes and faults nothing may be lost, duplicated or
// left lingering.
func TestCampaignTwoTopics(t *testing.T) {
	t.Parallel()
	res := runCampaign(t, Config{Seed: *flagSeed + 2, Cycles: 12, Guarantee: "exactly-once", RoutedTables: 3, SourceTopics: 2})
	requireClean(t, res)
	if res.Report.EventsRows == 0 || res.Report.Produced == 0 {
		t.Errorf("seed=%d: nothing loaded: %s", res.Seed, res.Report)
	}
}

// TestCampaignRoutedTables runs the campaign with the events sink routing
// every event (record header) to one of three tables, so each of its
// checkpoints decides txns of several tables: through the same crashes and
// faults, nothing may be lost, duplicated, misrouted or left lingering in
// any table.
func TestCampaignRoutedTables(t *testing.T) {
	t.Parallel()
	res := runCampaign(t, Config{Seed: *flagSeed + 1, Cycles: 12, Guarantee: "exactly-once", RoutedTables: 3})
	requireClean(t, res)
	if res.Report.EventsRows == 0 {
		t.Errorf("seed=%d: nothing loaded: %s", res.Seed, res.Report)
	}
}

// TestCampaignAvro runs a short campaign whose topic carries Avro through
// the in-process Schema Registry (records.format avro): exactly-once must
// hold as with JSON, malformed records (not the wire format) reach the
// dead-letter topic, and the checker decodes the topic through its own
// registry client.
func TestCampaignAvro(t *testing.T) {
	t.Parallel()
	res := runCampaign(t, Config{Seed: DefaultSeed, Cycles: 8, Guarantee: "exactly-once", Format: FormatAvro})
	requireClean(t, res)
	if res.Report.Produced == 0 || res.Report.EventsRows == 0 {
		t.Errorf("seed=%d: nothing produced or loaded: %s", res.Seed, res.Report)
	}
}

// TestScenarioSchemaRegistryDown: the registry is down when a new schema
// version's first records arrive. Each sink must refuse (exit non-zero
// naming the record and the registry, a dead-letter topic configured
// notwithstanding), and once the registry is back load everything exactly
// once: a dead-lettered event would show as lost.
func TestScenarioSchemaRegistryDown(t *testing.T) {
	t.Parallel()
	res := runCampaign(t, Config{Seed: 3, Guarantee: "exactly-once", Format: FormatAvro,
		Plan: []Step{{Cycle: 1, Kind: RegistryDown, Events: 40, N: 2}}})
	requireClean(t, res)
	if n := res.Kills["refused:schema-registry-down"]; n != 2 {
		t.Errorf("seed=%d: %d sinks refused while the registry was down, want 2 (%v)", res.Seed, n, res.Kills)
	}
}

// TestCampaignProtobuf runs a short campaign whose topic carries Protobuf
// through the in-process Schema Registry (records.format protobuf, -chaos.format
// protobuf): five faults drawn from the JSON table, then the registry outage at a new schema
// version; exactly-once must hold as with JSON and Avro, and both sinks
// must refuse during the outage rather than dead-letter.
func TestCampaignProtobuf(t *testing.T) {
	t.Parallel()
	plan := append(Plan(DefaultSeed, 5, Scenarios, true), Step{Cycle: 6, Kind: RegistryDown, Events: 40, N: 2})
	res := runCampaign(t, Config{Seed: DefaultSeed, Cycles: len(plan), Guarantee: "exactly-once", Format: FormatProtobuf, Plan: plan})
	requireClean(t, res)
	if res.Report.Produced == 0 || res.Report.EventsRows == 0 {
		t.Errorf("seed=%d: nothing produced or loaded: %s", res.Seed, res.Report)
	}
	if n := res.Kills["refused:schema-registry-down"]; n != 2 {
		t.Errorf("seed=%d: %d sinks refused while the registry was down, want 2 (%v)", res.Seed, n, res.Kills)
	}
}
