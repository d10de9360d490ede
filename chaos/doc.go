// Package chaos is the crash-and-fault campaign of doris-sink: it drives
// `doris-sink run` as child processes against an in-process Kafka (kfake)
// and Doris emulator (doristest), injects one randomized fault per cycle
// (SIGKILL, failpoint crashes, SIGTERM drains, Doris and Kafka faults,
// malformed records), and then lets an independent Checker compare what
// Kafka holds with what Doris shows (over the MySQL protocol): lost,
// duplicated, stale and corrupt rows, lingering transactions, and ledger ↔
// Doris mismatches.
//
// Scenarios are data (Scenarios, a weighted table of fault kinds); a
// campaign's fault schedule is a pure function of its seed (Plan), so any
// failure is replayed with the same -chaos.seed. The moments at which a
// process dies are real wall-clock races and are not reproduced exactly;
// the schedule, fault parameters and produced history are.
//
// Config.RoutedTables makes the events sink route every event (by the
// RouteHeader record header, routing.table_header) to one of several
// tables, so each of its checkpoints decides txns of several tables; the
// Checker then reads every routed table and counts a row in the wrong
// table as unexpected (TestCampaignRoutedTables, TestScenarioRouted*).
// After label expiry each unresolved txn is resolved on its own
// (`checkpoint resolve --table`), assumed as Doris held it before it
// forgot.
//
// RunGroup is the group-mode campaign (job.slots ≥ 2): several members of
// one job run across cycles while they are killed (at random and at
// failpoints), frozen past the session timeout and resumed (zombies that
// must be fenced), added, removed, and the broker restarts during a
// rebalance; it waits on the broker's view of the group (DescribeGroup)
// and on the members' decisions, and checks with the same Checker
// (TestCampaignGroup, -chaos.group.cycles).
//
// Run it with `go test ./chaos -run TestCampaign` (flags -chaos.cycles,
// -chaos.seed, -chaos.mode); docs/reliability.md has the fault model, the
// checker and published figures.
package chaos
