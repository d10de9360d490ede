package run

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// Issue 12, scenario 5 (second half): kafka.start changed after the job
// decided (earliest → latest) is ignored, with a log line saying it
// applies only to a job that never decided anything; the restart resumes
// from the decided position and loses nothing produced while the job was
// down (both coordinators). The first half, latest and a crash before the
// first decision, is TestCoordinatorLatestPersistedBeforeFirstLoad.
func TestStartChangedAfterDecisionsIgnored(t *testing.T) {
	t.Parallel()
	for _, coord := range []string{config.CoordinatorFile, config.CoordinatorKafka} {
		t.Run(coord, func(t *testing.T) {
			t.Parallel()
			e := newCoordEnv(t)
			e.coord = coord
			dir := filepath.Join(e.dir, "data")
			e.produce(8)
			e.runToEnd(dir)
			e.start = "latest"
			e.produce(6) // while the job is down: latest would skip them
			e.runToEnd(dir)
			e.checkExactlyOnce(0)
			logs := e.logs.String()
			if !strings.Contains(logs, "kafka.start applies only to a job that never decided anything and is ignored") ||
				!strings.Contains(logs, "kafka.start=latest") {
				t.Errorf("no log line says kafka.start latest is ignored:\n%s", logs)
			}
		})
	}
}
