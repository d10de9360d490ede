package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka/coordlog"
)

// importFileStore imports, once, the file checkpoint store of a job that
// ran with job.coordinator file into its new Kafka state: when the Kafka
// state is new (nothing announced or decided) and job.data_dir holds a
// file store of this job, its state is saved as the first Kafka state (one
// fenced transaction, which also commits the decided end offsets to the
// group). The file store's lock is held meanwhile, so a file-coordinated
// process of the job cannot run during the import. The migration marker
// (marker.go) is made durable before the Kafka save, as importing, and
// after it, as imported; a file start refuses either. A crash before the
// save leaves the Kafka state new and the next start imports again; a
// crash after it finds the Kafka state not new and skips: idempotent.
// Every start whose Kafka state is not new restores a missing (or
// importing) marker (restoreMarker), so neither a crash between the save
// and the marker nor a deleted marker lets a file start use the stale
// store.
func importFileStore(ctx context.Context, st *coordlog.Store, cfg *config.Config, d Deps) error {
	cur, err := st.Load(ctx)
	if err != nil {
		return err
	}
	dir, topic := cfg.Job.DataDir, st.Log().Topic()
	m, err := ReadMigrationMarker(dir)
	if err != nil {
		return err
	}
	if cur.Decided != nil || len(cur.Announced) > 0 || cur.NextID > 1 {
		return restoreMarker(cfg, d, topic, m) // the Kafka state is the job's: nothing to import
	}
	if m != nil && m.State == MarkerImported {
		return fmt.Errorf("state topic %s holds no state of the job, but job.data_dir %s says its file store was imported into Kafka "+
			"already (%s: %s): the state topic was deleted or emptied since, and the file store is stale; it is not imported again "+
			"(restore the state topic, or start the job under a new job.name)", topic, dir, MigratedMarker, m.Note)
	}
	if _, err := checkpoint.ReadFile(dir); errors.Is(err, fs.ErrNotExist) {
		return nil // never ran with the file coordinator here
	} else if err != nil {
		return fmt.Errorf("import the file checkpoint store of job.data_dir %s into Kafka: %w", dir, err)
	}
	// Adopting: the same restart may switch kafka.topic to a kafka.topics
	// list that holds it (PreviousSources), as a file or kafka start does
	// alone; the imported state then records the new source.
	fst, err := checkpoint.OpenFileAdopting(dir, Owner(cfg), PreviousSources(cfg))
	var owner *checkpoint.OwnerError
	if errors.As(err, &owner) {
		return fmt.Errorf("import the file checkpoint store of job.data_dir %s into Kafka (job.coordinator switched from file "+
			"to kafka): %w; if the topics changed in the same restart, do one change at a time: start once with "+
			"job.coordinator kafka and the old topics (the import), then change the topics", dir, err)
	}
	if err != nil {
		return fmt.Errorf("import the file checkpoint store of job.data_dir %s into Kafka (job.coordinator switched from file "+
			"to kafka): %w (stop every process of the job that still runs with job.coordinator file)", dir, err)
	}
	defer fst.Close()
	old, err := fst.Load(ctx)
	if err != nil {
		return fmt.Errorf("import the file checkpoint store of %s: %w", dir, err)
	}
	decided := "nothing decided"
	if old.Decided != nil {
		decided = fmt.Sprintf("decided checkpoint %d (%s, end %s)", old.Decided.ID, old.Decided.Label, old.Decided.End)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	if err := writeMigrationMarker(dir, MigrationMarker{State: MarkerImporting, StateTopic: topic,
		Note: fmt.Sprintf("%s: the checkpoint store of this directory (%s, next id %d) is being imported into Kafka state "+
			"topic %s; job.coordinator file must not use it again", now, decided, old.NextID, topic)}); err != nil {
		return fmt.Errorf("import the file checkpoint store of %s into state topic %s: %w (nothing imported)", dir, topic, err)
	}
	if old.Decided == nil {
		// Nothing decided yet: the persisted first start moves with the
		// state (before it: a crash in between leaves the Kafka state new,
		// and the next start imports both again).
		raw, ok, err := newFileFirstStart(cfg).FirstStart(ctx)
		if err == nil && ok {
			err = st.SaveFirstStart(ctx, raw)
		}
		if err != nil {
			return fmt.Errorf("import the first start persisted in %s into state topic %s: %w", dir, topic, err)
		}
	}
	if err := st.Save(ctx, old); err != nil {
		return fmt.Errorf("import the file checkpoint store of %s into state topic %s: %w (%s stays %s: the next "+
			"job.coordinator kafka start imports again or finds the import done)", dir, topic, err, MigratedMarker, MarkerImporting)
	}
	d.Logger.Warn("coordinator: imported the file checkpoint store into Kafka (job.coordinator switched from file to kafka)",
		"data_dir", dir, "state_topic", topic, "state", decided, "next_id", old.NextID)
	if err := writeMigrationMarker(dir, MigrationMarker{State: MarkerImported, StateTopic: topic,
		Note: fmt.Sprintf("%s: the checkpoint store of this directory was imported into Kafka state topic %s (%s, next id %d); "+
			"job.coordinator file must not use it again: the job's decisions continue in Kafka", now, topic, decided, old.NextID)}); err != nil {
		// The importing marker still refuses a file start; the next kafka
		// start marks it imported (restoreMarker).
		d.Logger.Warn("coordinator: cannot mark the import done (the marker stays importing, which refuses job.coordinator "+
			"file all the same)", "data_dir", dir, "err", err)
	}
	return nil
}

// restoreMarker marks job.data_dir imported when the Kafka state is the
// job's and the directory holds a file store of the job without an
// imported marker: the marker was lost (deleted, or a crash between the
// import's Kafka save and its write), and without it a later file start
// would continue from the stale store. The store's lock is taken for the
// write, so no file process of the job runs meanwhile (nor starts: it
// checks the marker under that lock). A store of another job, or one that
// cannot be read, needs no guard: a file start of this job refuses it by
// itself.
func restoreMarker(cfg *config.Config, d Deps, topic string, m *MigrationMarker) error {
	if m != nil && m.State == MarkerImported {
		return nil
	}
	dir := cfg.Job.DataDir
	old, err := checkpoint.ReadFile(dir)
	if err != nil || old.Owner != Owner(cfg) && !Owner(cfg).Adopts(old.Owner, PreviousSources(cfg)) {
		return nil
	}
	fst, err := checkpoint.OpenFileAdopting(dir, Owner(cfg), PreviousSources(cfg))
	if err != nil {
		return fmt.Errorf("job.data_dir %s holds a file checkpoint store of job %s that is not marked as imported into state topic "+
			"%s, and it cannot be locked to mark it: %w (stop every process of the job that still runs with job.coordinator file)",
			dir, cfg.Job.Name, topic, err)
	}
	defer fst.Close()
	was := "missing"
	if m != nil {
		was = m.State
	}
	if err := writeMigrationMarker(dir, MigrationMarker{State: MarkerImported, StateTopic: topic,
		Note: fmt.Sprintf("%s: restored by a job.coordinator kafka start (the marker was %s): state topic %s holds the job's "+
			"state, so this directory's checkpoint store is stale; job.coordinator file must not use it again",
			time.Now().UTC().Format(time.RFC3339), was, topic)}); err != nil {
		return fmt.Errorf("restore the migration marker (nothing else guards the stale file store against a switch back to "+
			"job.coordinator file): %w", err)
	}
	d.Logger.Warn("coordinator: restored the migration marker: the state topic holds the job's state and job.data_dir a stale "+
		"file checkpoint store", "data_dir", dir, "state_topic", topic, "marker_was", was)
	return nil
}
