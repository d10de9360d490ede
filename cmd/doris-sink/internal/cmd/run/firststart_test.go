package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// stopAfterStart builds the job in dir and stops it (context cancelled)
// once its start position is fixed, before anything is decided.
func (e *coordEnv) stopAfterStart(dir string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, abort := context.WithCancel(ctx)
	defer abort()
	job, err := e.build(dir, kafka.WithTestingKnobs(&kafka.TestingKnobs{AfterStart: func(kafka.Position) { abort() }}))
	if err != nil {
		e.t.Fatalf("build: %v\n%s", err, e.logs.String())
	}
	if err := job.Connector.Run(first); !errors.Is(err, context.Canceled) {
		e.t.Fatalf("first run: %v, want it stopped before any decision", err)
	}
}

// Issue 12, scenario 5 with job.coordinator file: kafka.start latest and a
// crash before the first decision. The resolved start is persisted in
// job.data_dir (first-start.json) before the first load, so the restart
// does not resolve latest again and loses nothing produced since; it was
// lost before (the restart resolved latest again).
func TestFileCoordinatorLatestPersistedBeforeFirstLoad(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	e.coord = config.CoordinatorFile
	e.start = "latest"
	dir := filepath.Join(e.dir, "data")
	e.produce(10) // before the first start: not loaded
	e.stopAfterStart(dir)
	if _, err := os.Stat(filepath.Join(dir, FirstStartFile)); err != nil {
		t.Fatalf("first start not persisted: %v", err)
	}
	e.produce(6) // while the job is down: must be loaded
	e.runToEnd(dir)
	e.checkExactlyOnce(10)
	if !strings.Contains(e.logs.String(), "persisted before") {
		t.Errorf("the restart did not use the persisted first start:\n%s", e.logs.String())
	}
	// The group offsets are still committed for monitoring with file.
	fo, err := e.adm.FetchOffsets(context.Background(), "doris-sink-"+coordJob)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fo.Lookup("orders", 0); !ok || o.At != 8 {
		t.Errorf("monitoring commit of orders/0: %+v, want 8", o)
	}
}

// The persisted first start of a file job that never decided moves with
// the import into Kafka: kafka.start latest, a crash before the first
// decision with job.coordinator file, then a kafka start loads what was
// produced since the first start, exactly once.
func TestFirstStartImportedWithFileStore(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	e.coord = config.CoordinatorFile
	e.start = "latest"
	dir := filepath.Join(e.dir, "data")
	e.produce(10)
	e.stopAfterStart(dir)
	e.produce(6)
	e.coord = config.CoordinatorKafka
	e.runToEnd(dir)
	e.checkExactlyOnce(10)
	if !strings.Contains(e.logs.String(), "imported the file checkpoint store into Kafka") {
		t.Errorf("no import logged:\n%s", e.logs.String())
	}
}
