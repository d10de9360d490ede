package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The same job config started twice with job.coordinator: kafka and two
// data dirs, as two processes: the second fences the first, which exits 1
// with an error naming the job and the state topic (here idle, so the
// fence check finds it); the second loads the rest; every record once.
func TestE2EKafkaCoordinatorSecondProcessFencesFirst(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "delivery: { checkpoint_interval: 30m, checkpoint_max_rows: 10 }")
	env := func(dir string) []string {
		return []string{"DORIS_SINK_JOB__COORDINATOR=kafka", "DORIS_SINK_JOB__DATA_DIR=" + filepath.Join(e.dir, dir)}
	}
	e.produce(50)
	a := e.start(env("a")...)
	a.waitDecided(50)
	b := e.start(env("b")...)
	b.waitLog("recovered; reading", msgIs("recovered; reading"))
	if code := a.wait(); code != 1 {
		t.Fatalf("first process exit code %d, want 1 (fenced)", code)
	}
	lines := strings.Split(strings.TrimSpace(a.stderr()), "\n")
	t.Log(lines[len(lines)-1])
	for _, want := range []string{"fenced", "job e2e", "doris-sink.state.e2e"} {
		if !strings.Contains(a.stderr(), want) {
			t.Errorf("first process's stderr lacks %q", want)
		}
	}
	e.produce(20)
	b.waitDecided(70)
	b.signal(syscall.SIGTERM)
	if code := b.wait(); code != 0 {
		t.Fatalf("second process exit code %d after SIGTERM, want 0", code)
	}
	e.checkRows()
	e.checkNoOpenTxns("after the drain")
}
