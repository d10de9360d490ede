package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// MigratedMarker is the file `run` writes in job.data_dir once it imported
// the file store's state into the Kafka state topic (job.coordinator
// switched from file to kafka). A later start with job.coordinator file
// refuses to use the stale file store while the marker exists.
const MigratedMarker = "MIGRATED-TO-KAFKA"

// importFileStore imports, once, the file checkpoint store of a job that
// ran with job.coordinator file into its new Kafka state: when the Kafka
// state is new (nothing announced or decided) and job.data_dir holds a
// file store of this job, its state is saved as the first Kafka state (one
// fenced transaction, which also commits the decided end offsets to the
// group). The file store's lock is held meanwhile, so a file-coordinated
// process of the job cannot run during the import. A crash before the save
// leaves the Kafka state new and the next start imports again; a crash
// after it finds the Kafka state not new and skips: idempotent. Then the
// marker is written (its loss only drops the guard against switching
// back).
func importFileStore(ctx context.Context, st *coordlog.Store, cfg *config.Config, d Deps) error {
	cur, err := st.Load(ctx)
	if err != nil {
		return err
	}
	if cur.Decided != nil || len(cur.Announced) > 0 || cur.NextID > 1 {
		return nil // the Kafka state is the job's: nothing to import
	}
	var me *MigratedError
	if err := checkNotMigrated(cfg.Job.DataDir); errors.As(err, &me) {
		return fmt.Errorf("state topic %s holds no state of the job, but job.data_dir %s says its file store was imported into Kafka "+
			"already (%s: %s): the state topic was deleted or emptied since, and the file store is stale; it is not imported again "+
			"(restore the state topic, or start the job under a new job.name)", st.Log().Topic(), cfg.Job.DataDir, MigratedMarker, me.Note)
	} else if err != nil {
		return err
	}
	if _, err := checkpoint.ReadFile(cfg.Job.DataDir); errors.Is(err, fs.ErrNotExist) {
		return nil // never ran with the file coordinator here
	} else if err != nil {
		return fmt.Errorf("import the file checkpoint store of job.data_dir %s into Kafka: %w", cfg.Job.DataDir, err)
	}
	fst, err := checkpoint.OpenFile(cfg.Job.DataDir, Owner(cfg))
	if err != nil {
		return fmt.Errorf("import the file checkpoint store of job.data_dir %s into Kafka (job.coordinator switched from file "+
			"to kafka): %w (stop every process of the job that still runs with job.coordinator file)", cfg.Job.DataDir, err)
	}
	defer fst.Close()
	old, err := fst.Load(ctx)
	if err != nil {
		return fmt.Errorf("import the file checkpoint store of %s: %w", cfg.Job.DataDir, err)
	}
	if err := st.Save(ctx, old); err != nil {
		return fmt.Errorf("import the file checkpoint store of %s into state topic %s: %w", cfg.Job.DataDir, st.Log().Topic(), err)
	}
	decided := "nothing decided"
	if old.Decided != nil {
		decided = fmt.Sprintf("decided checkpoint %d (%s, end %s)", old.Decided.ID, old.Decided.Label, old.Decided.End)
	}
	d.Logger.Warn("coordinator: imported the file checkpoint store into Kafka (job.coordinator switched from file to kafka)",
		"data_dir", cfg.Job.DataDir, "state_topic", st.Log().Topic(), "state", decided, "next_id", old.NextID)
	note := fmt.Sprintf("%s: the checkpoint store of this directory was imported into Kafka state topic %s (%s, next id %d); "+
		"job.coordinator file must not use it again: the job's decisions continue in Kafka\n",
		time.Now().UTC().Format(time.RFC3339), st.Log().Topic(), decided, old.NextID)
	if err := os.WriteFile(filepath.Join(cfg.Job.DataDir, MigratedMarker), []byte(note), 0o644); err != nil {
		d.Logger.Warn("coordinator: cannot write the migration marker (nothing guards a switch back to job.coordinator file)",
			"err", err)
	}
	return nil
}

// MigratedError refuses job.coordinator file for a data dir whose store
// was imported into Kafka: the file store stopped where the import took
// it, the decisions since are in the state topic, so loading from the file
// store would load records twice.
type MigratedError struct {
	DataDir, Note string
}

// Error names the marker and the way out.
func (e *MigratedError) Error() string {
	return fmt.Sprintf("job.data_dir %s: its checkpoint store was imported into Kafka (%s: %s); refusing job.coordinator file, "+
		"which would continue from the stale file store and load records twice: keep job.coordinator kafka", e.DataDir,
		MigratedMarker, e.Note)
}

// checkNotMigrated refuses a file-coordinated start in a migrated data dir.
func checkNotMigrated(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, MigratedMarker))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("job.data_dir %s: %w", dir, err)
	}
	return &MigratedError{DataDir: dir, Note: string(trimNL(b))}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
