package run

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/doris-sink/doris-sink/cmd/doris-sink/internal/config"
)

// The instance id of a group member (design §7.2, "Instance id"): Kafka's
// group.instance.id, so a restart of the same process (kill -9, a crash, a
// supervisor's restart) rejoins as the same static member and gets its
// slots back at once instead of waiting out kafka.session_timeout.
// job.instance sets it; unset, it is a random id created once in
// job.data_dir. Either way the process holds an exclusive lock in
// job.data_dir for its life, so two processes can never run as one member.

// InstanceIDFile is the file in job.data_dir holding the instance id of a
// member whose job.instance is unset.
const InstanceIDFile = "instance-id"

// instanceLockFile is the lock a member without job.instance holds in
// job.data_dir; one with job.instance X holds "instance-X.lock" (so
// members of distinct explicit instances may share a job.data_dir).
const instanceLockFile = "instance.lock"

// instanceIDPrefix starts every generated instance id.
const instanceIDPrefix = "doris-sink-"

// memberInstance is the instance id a member joins with.
type memberInstance struct {
	// ID is the group.instance.id.
	ID string
	// Explicit: ID is job.instance; else it was read from (or created in)
	// File.
	Explicit bool
	File     string
	release  func()
}

// Release lets go of the data_dir lock (the kernel does it on exit).
func (mi *memberInstance) Release() {
	if mi != nil && mi.release != nil {
		mi.release()
		mi.release = nil
	}
}

// claimInstance locks job.data_dir for this member (instance.lock, or
// instance-<job.instance>.lock) and returns its instance id: job.instance,
// or the id kept in job.data_dir/instance-id, created on first use. A
// directory another process holds is refused with *DataDirInUseError; an
// instance-id file that is not a valid id with *InstanceIDFileError.
func claimInstance(cfg *config.Config) (*memberInstance, error) {
	dir := cfg.Job.DataDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("job.data_dir %s: %w", dir, err)
	}
	lockName := instanceLockFile
	if cfg.Job.Instance != "" {
		lockName = "instance-" + cfg.Job.Instance + ".lock"
	}
	release, err := lockInstance(dir, filepath.Join(dir, lockName), cfg.Job.Instance)
	if err != nil {
		return nil, err
	}
	if cfg.Job.Instance != "" {
		return &memberInstance{ID: cfg.Job.Instance, Explicit: true, release: release}, nil
	}
	path := filepath.Join(dir, InstanceIDFile)
	id, err := readOrCreateInstanceID(path)
	if err != nil {
		release()
		return nil, err
	}
	return &memberInstance{ID: id, File: path, release: release}, nil
}

// readOrCreateInstanceID reads the instance id in path, or creates it:
// a random id written to a temporary file, fsync'd, renamed into place and
// the directory fsync'd, so a crash leaves either no file or a whole one.
func readOrCreateInstanceID(path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSuffix(string(b), "\n")
		if msg := config.InstanceIDProblem(id); msg != "" || id == "" {
			if id == "" {
				msg = "the file is empty"
			}
			return "", &InstanceIDFileError{Path: path, Problem: msg}
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the member's instance id %s: %w", path, err)
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("create the member's instance id: %w", err)
	}
	id := instanceIDPrefix + hex.EncodeToString(r[:])
	if err := writeFileDurably(path, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("create the member's instance id %s: %w", path, err)
	}
	return id, nil
}

// writeFileDurably writes b to path through a temporary file in the same
// directory: fsync, rename, fsync of the directory.
func writeFileDurably(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// InstanceIDFileError is an instance-id file in job.data_dir that does not
// hold a valid Kafka group.instance.id (edited, truncated, or another
// file): the member does not guess, since another id would join as another
// member.
type InstanceIDFileError struct {
	// Path is the file; Problem what is wrong with its content.
	Path, Problem string
}

// Error names the file, the problem and the fix.
func (e *InstanceIDFileError) Error() string {
	return fmt.Sprintf("the member's instance id file %s is corrupt: %s; delete it (the next start creates a new id: the "+
		"group sees a new member, and the old id's slots move after kafka.session_timeout) or set job.instance", e.Path, e.Problem)
}

// DataDirInUseError is a second process started on a job.data_dir another
// running process of the job holds: both would join the group as the same
// member (the same instance id) and share one local ledger.
type DataDirInUseError struct {
	// Dir is job.data_dir, Lock the lock file, Instance job.instance ("":
	// unset, the id in job.data_dir/instance-id).
	Dir, Lock, Instance string
	// Holder is what the holder wrote in the lock file (pid and host;
	// informational), "" when unreadable.
	Holder string
}

// Error names the directory, the holder and the fix.
func (e *DataDirInUseError) Error() string {
	holder := "another process"
	if e.Holder != "" {
		holder = e.Holder
	}
	what := "job.data_dir " + e.Dir
	if e.Instance != "" {
		what += " with job.instance " + e.Instance
	}
	return fmt.Sprintf("%s is in use by %s (lock %s): two processes on one job.data_dir would join the job's consumer group "+
		"as the same member; give each copy of the job its own job.data_dir, or give each its own job.instance", what, holder, e.Lock)
}
