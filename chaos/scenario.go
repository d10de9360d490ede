package chaos

import (
	"fmt"
	"math/rand/v2"

	"github.com/doris-sink/doris-sink/loader"
)

// FaultKind names one kind of fault a campaign cycle injects.
type FaultKind string

// Fault kinds. Each cycle starts the sinks, injects one fault and leaves
// them stopped (killed, crashed, refused or drained); the next cycle's
// start is a recovery. What each does is in Scenarios' docs.
const (
	KillRandom       FaultKind = "kill-random"
	KillFailpoint    FaultKind = "kill-failpoint"
	Drain            FaultKind = "sigterm-drain"
	CommitLost       FaultKind = "doris-commit-applied-response-lost"
	BEDown           FaultKind = "doris-be-down"
	FEErrors         FaultKind = "doris-fe-down-and-errors"
	PrecommitTimeout FaultKind = "doris-precommit-timeout-while-down"
	TxnCap           FaultKind = "doris-running-txn-cap"
	SlowLoad         FaultKind = "doris-slow-load"
	KafkaRestart     FaultKind = "kafka-broker-restart"
	MalformedDLQ     FaultKind = "malformed-burst-dlq"
	MalformedNoDLQ   FaultKind = "malformed-burst-no-dlq"
	LabelExpiry      FaultKind = "label-expiry-while-down"
	SchemaChange     FaultKind = "doris-schema-change-mid-run"
	// RegistryDown is drawn only in FormatAvro campaigns (AvroScenarios).
	RegistryDown FaultKind = "schema-registry-down"
)

// Scenario is one row of the fault table: a kind, its weight in the
// random draw, and whether it only applies to exactly-once.
type Scenario struct {
	Kind   FaultKind
	Weight int
	// EOSOnly scenarios need a commit phase (2PC) and are not drawn in
	// at-least-once campaigns.
	EOSOnly bool
	Doc     string
}

// Scenarios is the default fault table (STYLE.md "Tests": scenarios are
// data). Weights favour process deaths, the faults the protocol exists
// for.
var Scenarios = []Scenario{
	{KillRandom, 14, false, "SIGKILL every sink at a random moment after recovery"},
	{KillFailpoint, 20, false, "arm a crash at a named failpoint (loader.AllFailpoints, K+crash) through DORIS_SINK_FAILPOINTS; SIGKILL if it was not reached once all is decided"},
	{Drain, 8, false, "SIGTERM at a random moment: drain, exit 0"},
	{CommitLost, 8, false, "Doris applies 1-2 commits and drops the response (ApplyThenDrop on commit), then drain"},
	{BEDown, 6, false, "the BE refuses connections for a while (BEDown/BEUp) while records arrive, then drain"},
	{FEErrors, 6, false, "the FE HTTP port is down for a while and get_load_state fails 3 times, then drain"},
	{PrecommitTimeout, 6, true, "crash after-decide, then Doris times the PRECOMMITTED txn out while the sink is down (heal on restart)"},
	{TxnCap, 5, false, "max_running_txn_num_per_db set to 1-2 for a while (begin refused), then restored and drained"},
	{SlowLoad, 6, false, "a Stream Load body or precommit blocks; released later (then drain) or the sink is killed while blocked"},
	{KafkaRestart, 6, false, "the Kafka broker restarts on the same port and data dir mid-run, then drain"},
	{MalformedDLQ, 4, false, "a burst of malformed records with a dead-letter topic configured: dead-lettered, then drain"},
	{MalformedNoDLQ, 3, false, "a burst of malformed records without a dead-letter topic: the sink refuses naming the record; the operator adds the dead-letter topic"},
	{SchemaChange, 3, false, "an operator adds a column (and, every other time, lengthens payload) with a light schema change while the sinks load, then more events and drain"},
	{LabelExpiry, 3, true, "crash after-decide, txn timed out and label expired while down: the sink refuses (UnresolvedError); the operator runs `checkpoint resolve --assume aborted`"},
}

// Step is one planned cycle: the fault and its random parameters. A plan
// is a pure function of the seed.
type Step struct {
	Cycle int
	Kind  FaultKind
	// Events is how many events are produced before the sinks start.
	Events int
	// Failpoint and Skip arm Failpoint=Skip+crash (KillFailpoint).
	Failpoint string
	Skip      int
	// Delay is the fault's moment, in milliseconds after recovery; Hold
	// how long a fault lasts (down time, blocked load).
	Delay, Hold int
	// N is the fault's count parameter (commits dropped, malformed
	// records, txn cap); Table targets one sink's table ("" = both).
	N     int
	Table string
	// Kill ends a SlowLoad by SIGKILL instead of release.
	Kill bool
}

// String renders the step for logs.
func (s Step) String() string {
	out := fmt.Sprintf("cycle %d %s events=%d", s.Cycle, s.Kind, s.Events)
	if s.Failpoint != "" {
		out += fmt.Sprintf(" failpoint=%d+%s", s.Skip, s.Failpoint)
	}
	out += fmt.Sprintf(" delay=%dms hold=%dms n=%d", s.Delay, s.Hold, s.N)
	if s.Table != "" {
		out += " table=" + s.Table
	}
	if s.Kill {
		out += " kill"
	}
	return out
}

// newRand is the campaign's PRNG for stream (0: plan, 1: history).
func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^stream))
}

// Plan draws cycles steps from table with seed. exactlyOnce false leaves
// out EOSOnly scenarios and the failpoints that never fire without a
// commit phase.
func Plan(seed uint64, cycles int, table []Scenario, exactlyOnce bool) []Step {
	rng := newRand(seed, 0)
	var rows []Scenario
	total := 0
	for _, s := range table {
		if s.Weight > 0 && (exactlyOnce || !s.EOSOnly) {
			rows = append(rows, s)
			total += s.Weight
		}
	}
	fps := loader.AllFailpoints
	if !exactlyOnce {
		fps = []string{loader.FailBeforeAnnounce, loader.FailAfterAnnounce, loader.FailMidStream,
			loader.FailAfterPrecommit, loader.FailBeforeDecide, loader.FailAfterDecide}
	}
	steps := make([]Step, 0, cycles)
	for i := range cycles {
		n := rng.IntN(total)
		var kind FaultKind
		for _, s := range rows {
			if n < s.Weight {
				kind = s.Kind
				break
			}
			n -= s.Weight
		}
		st := Step{Cycle: i + 1, Kind: kind, Events: 20 + rng.IntN(180), Delay: rng.IntN(1200), Hold: 200 + rng.IntN(1000),
			N: 1 + rng.IntN(3)}
		switch rng.IntN(4) {
		case 0:
			st.Table = EventsTable
		case 1:
			st.Table = StateTable
		}
		st.Failpoint = fps[rng.IntN(len(fps))]
		st.Skip = rng.IntN(3)
		st.Kill = rng.IntN(2) == 0
		if kind != KillFailpoint && kind != MemberFailpoint {
			st.Failpoint, st.Skip = "", 0
		}
		steps = append(steps, st)
	}
	return steps
}
