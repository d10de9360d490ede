package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// MigratedMarker is the file `run` writes in job.data_dir when it imports
// the file store's state into the Kafka state topic (job.coordinator
// switched from file to kafka): MarkerImporting before the import's Kafka
// save, MarkerImported after it (and restored by every kafka start that
// finds the Kafka state in use and the marker missing). A start with
// job.coordinator file refuses the data dir while the marker exists.
const MigratedMarker = "MIGRATED-TO-KAFKA"

// States of the migration marker.
const (
	// MarkerImporting: the import into Kafka was begun and may have
	// committed; a kafka start imports again (Kafka state new) or marks it
	// imported (Kafka state in use).
	MarkerImporting = "importing"
	// MarkerImported: the Kafka state topic holds the job's state; the file
	// store is stale.
	MarkerImported = "imported"
)

// MigrationMarker is the content of job.data_dir/MIGRATED-TO-KAFKA.
type MigrationMarker struct {
	// State is MarkerImporting or MarkerImported (a marker written by a
	// doris-sink without states reads as MarkerImported).
	State string `json:"state"`
	// StateTopic is the Kafka state topic the store went to ("" in a
	// marker without it).
	StateTopic string `json:"state_topic,omitempty"`
	// Note is the human-readable rest of the file.
	Note string `json:"note,omitempty"`
}

const (
	markerStateKey = "state: "
	markerTopicKey = "state_topic: "
)

// ReadMigrationMarker reads the migration marker of dir; nil when there is
// none.
func ReadMigrationMarker(dir string) (*MigrationMarker, error) {
	b, err := os.ReadFile(filepath.Join(dir, MigratedMarker))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("job.data_dir %s: read the migration marker: %w", dir, err)
	}
	m := &MigrationMarker{State: MarkerImported}
	rest := strings.TrimRight(string(b), "\r\n")
	for {
		line, tail, _ := strings.Cut(rest, "\n")
		switch {
		case strings.HasPrefix(line, markerStateKey):
			m.State = strings.TrimSpace(strings.TrimPrefix(line, markerStateKey))
		case strings.HasPrefix(line, markerTopicKey):
			m.StateTopic = strings.TrimSpace(strings.TrimPrefix(line, markerTopicKey))
		default:
			m.Note = rest
			return m, nil
		}
		rest = tail
	}
}

// writeMigrationMarker replaces dir's migration marker with m durably
// (temporary file, fsync, rename, directory fsync), so that a crash after
// it returns never loses it.
func writeMigrationMarker(dir string, m MigrationMarker) error {
	body := markerStateKey + m.State + "\n" + markerTopicKey + m.StateTopic + "\n" + strings.TrimRight(m.Note, "\n") + "\n"
	err := writeDurable(filepath.Join(dir, MigratedMarker), []byte(body), 0o644)
	if err != nil {
		return fmt.Errorf("job.data_dir %s: write the migration marker %s (%s): %w", dir, MigratedMarker, m.State, err)
	}
	return nil
}

// MigratedError refuses job.coordinator file (run, `checkpoint rebase`)
// for a data dir whose store was imported into Kafka, or whose import was
// begun: the file store stopped where the import took it, the decisions
// since are in the state topic, so loading from the file store would load
// records twice.
type MigratedError struct {
	DataDir string
	// State is the marker's state (MarkerImporting or MarkerImported);
	// StateTopic the state topic the job's decisions are in.
	State, StateTopic string
	// Note is the marker's note.
	Note string
}

// Error names the marker, the state topic and the way out.
func (e *MigratedError) Error() string {
	if e.State == MarkerImporting {
		return fmt.Sprintf("job.data_dir %s: an import of its checkpoint store into Kafka state topic %s was begun and may have "+
			"committed (%s: %s; %s); refusing job.coordinator file, which could continue from a stale file store and load "+
			"records twice: start the job with job.coordinator kafka, which repeats the import or finds it done",
			e.DataDir, e.StateTopic, MigratedMarker, e.State, e.Note)
	}
	return fmt.Sprintf("job.data_dir %s: its checkpoint store was imported into Kafka state topic %s (%s: %s; %s); refusing "+
		"job.coordinator file, which would continue from the stale file store and load records twice: keep job.coordinator "+
		"kafka (the job's decisions are in that state topic)", e.DataDir, e.StateTopic, MigratedMarker, e.State, e.Note)
}

// CheckNotMigrated refuses (*MigratedError) the use of cfg's job.data_dir
// file store once its migration marker says importing or imported. Callers
// that write the store check it under the store's lock (OpenFileStore).
func CheckNotMigrated(cfg *config.Config) error {
	m, err := ReadMigrationMarker(cfg.Job.DataDir)
	if err != nil || m == nil {
		return err
	}
	topic := m.StateTopic
	if topic == "" {
		topic = coordlog.StateTopic(cfg.Job.Name)
	}
	return &MigratedError{DataDir: cfg.Job.DataDir, State: m.State, StateTopic: topic, Note: m.Note}
}

// OpenFileStore opens the file checkpoint store of cfg's job in
// job.data_dir as its writer (taking its lock) and then, under the lock,
// refuses a migrated data dir (*MigratedError; the store is closed): an
// import that ran before the lock was taken has written its marker by
// then, and none can start while the lock is held. A store of a one-topic
// job now reading several topics that include it is adopted
// (PreviousSources).
func OpenFileStore(cfg *config.Config) (*checkpoint.FileStore, error) {
	fs, err := checkpoint.OpenFileAdopting(cfg.Job.DataDir, Owner(cfg), PreviousSources(cfg))
	if err != nil {
		return nil, fmt.Errorf("job.data_dir: %w", err)
	}
	if err := CheckNotMigrated(cfg); err != nil {
		fs.Close()
		return nil, err
	}
	return fs, nil
}
