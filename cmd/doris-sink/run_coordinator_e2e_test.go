package main

import (
	"path/filepath"
	"syscall"
	"testing"
)

// Issue 22: the same job config (job.coordinator kafka, job.slots 1)
// started twice with two data dirs, as two processes: the second is a
// ready standby (it joins the job's consumer group, owns no slot, loads
// nothing) and never fences the first; on the first's SIGTERM (it drains,
// exit 0, and leaves the group) the second takes over and loads the rest;
// every record once, no transaction left open.
func TestE2EKafkaCoordinatorSecondProcessIsAStandby(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "delivery: { checkpoint_interval: 1s, checkpoint_max_rows: 10 }")
	env := func(dir string) []string {
		return []string{"DORIS_SINK_JOB__COORDINATOR=kafka", "DORIS_SINK_JOB__DATA_DIR=" + filepath.Join(e.dir, dir)}
	}
	e.produce(50)
	a := e.start(env("a")...)
	a.waitDecided(50)
	b := e.start(env("b")...)
	b.waitLog("the standby's empty assignment", func(m map[string]any) bool {
		s, _ := m["slots"].([]any)
		return m["msg"] == "group mode: slots assigned" && len(s) == 0
	})
	e.produce(20)
	a.waitDecided(70) // the first process still loads: it was not fenced
	a.signal(syscall.SIGTERM)
	if code := a.wait(); code != 0 { // a fenced first process exits 1
		t.Fatalf("first process exit code %d after SIGTERM, want 0 (drained, never fenced):\n%s", code, a.stderr())
	}
	b.waitLog("recovered; reading", msgIs("recovered; reading"))
	e.produce(20)
	b.waitDecided(90)
	b.signal(syscall.SIGTERM)
	if code := b.wait(); code != 0 {
		t.Fatalf("second process exit code %d after SIGTERM, want 0", code)
	}
	e.checkRows()
	e.checkNoOpenTxns("after the drain")
}
