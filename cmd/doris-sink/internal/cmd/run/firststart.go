package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
	"github.com/doris-sink/doris-sink/loader/checkpoint"
	"github.com/doris-sink/doris-sink/loader/kafka"
)

// FirstStartFile is the file in job.data_dir that holds the resolved
// first-start position of a job.coordinator file job (the Kafka
// coordinator keeps it in the state record): written, durably, before the
// first record is read, and used by every start until the first decision,
// so that a crash before it does not resolve kafka.start again (with
// latest, a second resolution skips what was produced in between).
const FirstStartFile = "first-start.json"

// firstStartFormat names the document in FirstStartFile.
const firstStartFormat = "doris-sink-first-start"

// firstStartDoc is FirstStartFile's content.
type firstStartDoc struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Owner is the store owner the position was resolved for.
	Owner checkpoint.Owner `json:"owner"`
	// Position is the resolved position (kafka.Position JSON).
	Position json.RawMessage `json:"position"`
}

// fileFirstStart is the kafka.StartStore of job.coordinator file: the
// file store's lock (held by the process) guards the file. It does not
// commit group offsets (kafka.OffsetCommitter), so the Connector's
// monitoring commit stays on.
type fileFirstStart struct {
	dir   string
	owner checkpoint.Owner
	prev  []string // PreviousSources: a position of the one-topic job is adopted
}

var _ kafka.StartStore = (*fileFirstStart)(nil)

func newFileFirstStart(cfg *config.Config) *fileFirstStart {
	return &fileFirstStart{dir: cfg.Job.DataDir, owner: Owner(cfg), prev: PreviousSources(cfg)}
}

// FirstStart returns the persisted first start; a file of another job
// (owner) is refused, naming it.
func (s *fileFirstStart) FirstStart(context.Context) ([]byte, bool, error) {
	path := filepath.Join(s.dir, FirstStartFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("job.data_dir: read the persisted first start: %w", err)
	}
	var doc firstStartDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || doc.Format != firstStartFormat || doc.Version != 1 {
		return nil, false, fmt.Errorf("job.data_dir: %s is not a first-start document of doris-sink (format %q version %d, err %v): "+
			"move it away only if the job never decided anything and kafka.start may be resolved again", path, doc.Format, doc.Version, err)
	}
	if doc.Owner != s.owner && !s.owner.Adopts(doc.Owner, s.prev) {
		return nil, false, fmt.Errorf("job.data_dir: %s was written for job %s table %s.%s source %s, not this config's job %s "+
			"table %s.%s source %s: use another job.data_dir", path, doc.Owner.Job, doc.Owner.DB, doc.Owner.Table, doc.Owner.Source,
			s.owner.Job, s.owner.DB, s.owner.Table, s.owner.Source)
	}
	return doc.Position, true, nil
}

// SaveFirstStart writes raw durably (temporary file, fsync, rename, fsync
// of the directory).
func (s *fileFirstStart) SaveFirstStart(_ context.Context, raw []byte) error {
	b, err := json.Marshal(firstStartDoc{Format: firstStartFormat, Version: 1, Owner: s.owner, Position: raw})
	if err != nil {
		return err
	}
	path := filepath.Join(s.dir, FirstStartFile)
	if err := writeDurable(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("job.data_dir: persist the first start %s in %s: %w", raw, path, err)
	}
	return nil
}

// writeDurable replaces path with b (a new file gets perm): a temporary
// file in the same directory, fsync, rename, fsync of the directory.
func writeDurable(path string, b []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
