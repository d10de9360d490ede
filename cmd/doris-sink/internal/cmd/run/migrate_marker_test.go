package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// readMarker returns dir's migration marker, failing the test if there is
// none.
func readMarker(t *testing.T, dir string) *MigrationMarker {
	t.Helper()
	m, err := ReadMigrationMarker(dir)
	if err != nil || m == nil {
		t.Fatalf("migration marker in %s: %+v, %v; want one", dir, m, err)
	}
	return m
}

// wantFileStartRefused asserts that a job.coordinator file start in dir is
// refused with a *MigratedError of state, naming the state topic.
func (e *coordEnv) wantFileStartRefused(dir, state string) {
	e.t.Helper()
	coord := e.coord
	e.coord = config.CoordinatorFile
	defer func() { e.coord = coord }()
	_, err := e.build(dir)
	var me *MigratedError
	if !errors.As(err, &me) {
		e.t.Fatalf("file start in a migrated data dir: %v, want *MigratedError (the stale file store would load records twice)", err)
	}
	if topic := coordlog.StateTopic(coordJob); me.State != state || me.StateTopic != topic || !strings.Contains(err.Error(), topic) {
		e.t.Errorf("refusal %+v (%v): want state %s naming state topic %s", me, err, state, topic)
	}
}

// Review finding 2: a lost migration marker (deleted, or a crash between
// the import's Kafka save and the marker write) is restored by the next
// kafka start, whose Kafka state is the job's, so a switch back to file is
// still refused instead of continuing from the stale file store.
func TestMigrationMarkerLostIsRestoredByKafkaStart(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.coord = config.CoordinatorFile
	e.produce(8)
	e.runToEnd(dir)
	e.coord = config.CoordinatorKafka
	e.produce(8)
	e.runToEnd(dir) // imports
	if m := readMarker(t, dir); m.State != MarkerImported || m.StateTopic != coordlog.StateTopic(coordJob) {
		t.Fatalf("marker after the import: %+v, want imported into %s", m, coordlog.StateTopic(coordJob))
	}
	if err := os.Remove(filepath.Join(dir, MigratedMarker)); err != nil {
		t.Fatal(err)
	}
	e.produce(4)
	e.runToEnd(dir) // Kafka state not new: no import, but the marker is restored
	if m := readMarker(t, dir); m.State != MarkerImported {
		t.Errorf("restored marker %+v, want imported", m)
	}
	if !strings.Contains(e.logs.String(), "restored the migration marker") {
		t.Errorf("no restore logged:\n%s", e.logs.String())
	}
	if n := strings.Count(e.logs.String(), "imported the file checkpoint store into Kafka"); n != 1 {
		t.Errorf("imported %d times, want once", n)
	}
	e.wantFileStartRefused(dir, MarkerImported)
	e.checkExactlyOnce(0)
}

// Review finding 2: the marker is durable as "importing" before the
// import's Kafka save. A crash before the save (Kafka state new, marker
// importing) refuses a file start and the next kafka start imports again;
// a crash after it (Kafka state the job's, marker still importing) makes
// the next kafka start mark it imported without a second import.
func TestMigrationMarkerImportingSurvivesACrashAroundTheImport(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.coord = config.CoordinatorFile
	e.produce(8)
	e.runToEnd(dir)
	importing := MigrationMarker{State: MarkerImporting, StateTopic: coordlog.StateTopic(coordJob), Note: "test: crash before the save"}
	// The crash between the importing marker and the Kafka save.
	if err := writeMigrationMarker(dir, importing); err != nil {
		t.Fatal(err)
	}
	e.wantFileStartRefused(dir, MarkerImporting)
	e.coord = config.CoordinatorKafka
	e.produce(8)
	e.runToEnd(dir) // Kafka state new, marker importing: imports
	if n := strings.Count(e.logs.String(), "imported the file checkpoint store into Kafka"); n != 1 {
		t.Fatalf("imported %d times, want once:\n%s", n, e.logs.String())
	}
	if m := readMarker(t, dir); m.State != MarkerImported {
		t.Errorf("marker after the import: %+v, want imported", m)
	}
	// The crash between the Kafka save and the imported marker.
	importing.Note = "test: crash after the save"
	if err := writeMigrationMarker(dir, importing); err != nil {
		t.Fatal(err)
	}
	e.produce(4)
	e.runToEnd(dir)
	if m := readMarker(t, dir); m.State != MarkerImported {
		t.Errorf("marker after a kafka start on an importing marker: %+v, want imported", m)
	}
	if n := strings.Count(e.logs.String(), "imported the file checkpoint store into Kafka"); n != 1 {
		t.Errorf("imported %d times, want once", n)
	}
	e.wantFileStartRefused(dir, MarkerImported)
	e.checkExactlyOnce(0)
}

// Review finding 3: the marker is checked under the file store's lock. A
// file process that read no marker before an import ran (the import takes
// and releases the lock) must still be refused when it takes the lock.
func TestFileStoreOpenChecksMigrationMarkerUnderTheLock(t *testing.T) {
	t.Parallel()
	e := newCoordEnv(t)
	dir := filepath.Join(e.dir, "data")
	e.coord = config.CoordinatorFile
	e.produce(8)
	e.runToEnd(dir)
	cfg := e.config(dir)
	if err := CheckNotMigrated(cfg); err != nil { // the file process's early look
		t.Fatal(err)
	}
	e.coord = config.CoordinatorKafka
	e.produce(4)
	e.runToEnd(dir)               // the import, meanwhile
	fs, err := OpenFileStore(cfg) // the file process takes the lock
	var me *MigratedError
	if !errors.As(err, &me) {
		if err == nil {
			fs.Close()
		}
		t.Fatalf("file store opened after the import: %v, want *MigratedError checked under the lock", err)
	}
	// The refusal released the lock: a kafka start still runs.
	e.produce(2)
	e.runToEnd(dir)
	e.checkExactlyOnce(0)
}
