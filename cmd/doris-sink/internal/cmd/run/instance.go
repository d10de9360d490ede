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
	// Moved, when not "", says that File was found in a copied or moved
	// job.data_dir and ID is a new id (readOrCreateInstanceID).
	Moved   string
	release func()
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
	here, err := homeOf(dir)
	if err != nil {
		release()
		return nil, err
	}
	id, moved, err := readOrCreateInstanceID(path, here)
	if err != nil {
		release()
		return nil, err
	}
	return &memberInstance{ID: id, File: path, Moved: moved, release: release}, nil
}

// instanceHome is where an instance id is created for: this host and the
// absolute job.data_dir.
type instanceHome struct{ Host, Dir string }

// homeOf returns the home of dir on this host.
func homeOf(dir string) (instanceHome, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return instanceHome{}, fmt.Errorf("job.data_dir %s: %w", dir, err)
	}
	host, err := os.Hostname()
	if err != nil {
		return instanceHome{}, fmt.Errorf("the member's instance id needs the host name: %w", err)
	}
	return instanceHome{Host: host, Dir: abs}, nil
}

// readOrCreateInstanceID reads the instance id in path, or creates it:
// a random id written to a temporary file, fsync'd, renamed into place and
// the directory fsync'd, so a crash leaves either no file or a whole one.
//
// The file's first line is the id; the lines after it name the host and
// the absolute job.data_dir it was created for. A file found under
// another host or directory is a copy of a data_dir (a restored backup, a
// directory copied to a second machine, a volume mounted elsewhere):
// keeping its id would make two processes one static member, each join
// fencing the other's (FENCED_INSTANCE_ID) for ever under a supervisor.
// The copy takes a new id instead (moved describes the old binding, ""
// when none); the original keeps its own. A file holding the id alone
// (written by hand) is taken as it is.
func readOrCreateInstanceID(path string, here instanceHome) (id, moved string, err error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		id := lines[0]
		if msg := config.InstanceIDProblem(id); msg != "" || id == "" {
			if id == "" {
				msg = "the file is empty"
			}
			return "", "", &InstanceIDFileError{Path: path, Problem: msg}
		}
		was := instanceHome{}
		for _, l := range lines[1:] {
			k, v, _ := strings.Cut(l, " ")
			switch k {
			case "host":
				was.Host = v
			case "dir":
				was.Dir = v
			}
		}
		if was == (instanceHome{}) || was == here {
			return id, "", nil
		}
		moved = fmt.Sprintf("instance id %s was created for host %q, job.data_dir %s; this is host %q, job.data_dir %s",
			id, was.Host, was.Dir, here.Host, here.Dir)
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("read the member's instance id %s: %w", path, err)
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", "", fmt.Errorf("create the member's instance id: %w", err)
	}
	id = instanceIDPrefix + hex.EncodeToString(r[:])
	body := id + "\nhost " + here.Host + "\ndir " + here.Dir + "\n"
	if err := writeDurable(path, []byte(body), 0o644); err != nil {
		return "", "", fmt.Errorf("create the member's instance id %s: %w", path, err)
	}
	return id, moved, nil
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
