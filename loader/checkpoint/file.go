package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Names of the files in a store directory.
const (
	// FileName is the store file.
	FileName = "checkpoint.json"
	// lockName is the lock file, holding the holder's PID.
	lockName = "LOCK"
	// tmpInfix marks temporary files of an atomic write: FileName + tmpInfix
	// + random. Leftovers from a crash are removed by OpenFile.
	tmpInfix = ".tmp-"
)

// FileStore is a Store in one directory: dir/checkpoint.json (see Encode
// for the format) and dir/LOCK. Its methods are safe for concurrent use.
// Call Close to release the lock.
type FileStore struct {
	dir   string
	path  string
	owner Owner
	// previous are the owner sources the store adopts (OpenFileAdopting).
	previous []string

	knobs FileKnobs
	// incarnation is the random id this open wrote into the store
	// (Incarnation).
	incarnation string

	mu     sync.Mutex
	lock   *os.File // nil once closed
	last   *State   // last state loaded or saved
	broken error    // set when a Save's outcome is unknown
	fenced error    // set when the file no longer holds incarnation
}

// FileKnobs are testing hooks of a FileStore (OpenFileWithKnobs). Each nil
// field has no effect.
type FileKnobs struct {
	// AfterRename runs in Save after the new state was renamed into place,
	// before the directory fsync. An error fails that Save as a failed
	// directory fsync would: the store's durable state is unknown (the
	// store refuses Save until Load re-synced it, see Load).
	AfterRename func() error
	// BeforeResync runs in a Load that re-syncs the store after such a
	// Save; an error fails that Load (the store stays unsynced).
	BeforeResync func() error
}

var _ Store = (*FileStore)(nil)

// OpenFile opens the store in dir for owner, creating dir (0o755) and the
// store if missing. It
//
//   - validates owner (Owner.Validate);
//   - takes a non-blocking flock on dir/LOCK, refusing with *LockedError if
//     another process or another OpenFile in this process holds it;
//   - removes temporary files left by a crash during Save;
//   - reads dir/checkpoint.json, refusing a corrupt file (*CorruptError),
//     or, if the file does not exist, durably writes NewState(owner) so the
//     owner is recorded from the first open;
//   - refuses a store recorded for another owner (*OwnerError);
//   - durably writes a new random incarnation id into the store
//     (Incarnation): every later Load and Save first checks that the file
//     still holds it, and refuses with an *IncarnationError (wrapping
//     ErrFenced) once it does not, the directory having been restored or
//     replaced under the running process.
//
// On error nothing is locked.
func OpenFile(dir string, owner Owner) (*FileStore, error) {
	return OpenFileWithKnobs(dir, owner, FileKnobs{})
}

// OpenFileAdopting is OpenFile that also opens a store recorded for owner
// but for a Source in previous (Owner.Adopts): Load returns its states
// with owner, and the next Save records owner.
func OpenFileAdopting(dir string, owner Owner, previous []string) (*FileStore, error) {
	return openFile(dir, owner, previous, FileKnobs{})
}

// OpenFileWithKnobs is OpenFile with testing hooks (FileKnobs).
func OpenFileWithKnobs(dir string, owner Owner, knobs FileKnobs) (*FileStore, error) {
	return openFile(dir, owner, nil, knobs)
}

func openFile(dir string, owner Owner, previous []string, knobs FileKnobs) (*FileStore, error) {
	if err := owner.Validate(); err != nil {
		return nil, fmt.Errorf("open checkpoint store %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open checkpoint store: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	f := &FileStore{dir: dir, path: filepath.Join(dir, FileName), owner: owner, previous: previous, lock: lock,
		knobs: knobs}
	if err := f.open(); err != nil {
		lock.Close()
		return nil, err
	}
	return f, nil
}

func (f *FileStore) open() error {
	if err := removeTemps(f.dir); err != nil {
		return err
	}
	inc, err := newIncarnation()
	if err != nil {
		return fmt.Errorf("open checkpoint store %s: %w", f.dir, err)
	}
	s, err := readState(f.path)
	what := "open"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s, what = NewState(f.owner), "create"
	case err != nil:
		return err
	}
	if s.Owner != f.owner && !f.owner.Adopts(s.Owner, f.previous) {
		return &OwnerError{Dir: f.dir, Stored: s.Owner, Config: f.owner}
	}
	// The state as stored (an adopted owner is recorded by the next
	// Save), with this open's incarnation.
	s.Incarnation = inc
	b, err := Encode(s)
	if err != nil {
		return fmt.Errorf("%s checkpoint store %s: %w", what, f.dir, err)
	}
	if _, err := writeAtomic(f.path, b, nil); err != nil {
		return fmt.Errorf("%s checkpoint store %s: write incarnation: %w", what, f.dir, err)
	}
	if f.owner.Adopts(s.Owner, f.previous) {
		s.Owner = f.owner
	}
	f.incarnation = inc
	f.last = s
	return nil
}

// Incarnation returns the random id (32 lower-case hex digits) this open
// of the store wrote into it (State.Incarnation, and Decision.Incarnation
// of every decision it saves). It changes at every OpenFile.
func (f *FileStore) Incarnation() string { return f.incarnation }

// checkIncarnation refuses s, the state read from the file, when it does
// not hold this open's incarnation; the store then stays fenced.
func (f *FileStore) checkIncarnation(s *State) error {
	if s.Incarnation == f.incarnation {
		return nil
	}
	f.fenced = &IncarnationError{Dir: f.dir, Opened: f.incarnation, OnDisk: s.Incarnation}
	return f.fenced
}

// removeTemps deletes leftovers of interrupted atomic writes.
func removeTemps(dir string) error {
	tmps, err := filepath.Glob(filepath.Join(dir, FileName+tmpInfix+"*"))
	if err != nil {
		return fmt.Errorf("list temporary files in %s: %w", dir, err)
	}
	for _, t := range tmps {
		if err := os.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove leftover temporary file: %w", err)
		}
	}
	return nil
}

// readState reads and decodes a store file; errors name the file.
func readState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint store: %w", err)
	}
	s, cerr := decode(b)
	if cerr != nil {
		cerr.Path = path
		return nil, cerr
	}
	return s, nil
}

// ReadFile reads and validates the store in dir without taking its lock,
// for inspection (`doris-sink checkpoint show`) while a writer may run:
// Save replaces the file atomically, so the result is a whole state. A
// missing store is an error wrapping fs.ErrNotExist; a corrupt one a
// *CorruptError.
func ReadFile(dir string) (*State, error) {
	return readState(filepath.Join(dir, FileName))
}

// Dir returns the store directory.
func (f *FileStore) Dir() string { return f.dir }

// Load reads the stored state from disk. After Close it returns ErrClosed.
// After a Save whose outcome is unknown (ErrUnsynced) it re-syncs the store
// first: temporary files are removed, the file is read and fsync'd and the
// directory fsync'd, so that the state returned is the durable one (the old
// or the new state of that Save, whichever the rename left); only then does
// the store accept Save again. A re-sync that fails returns an error
// wrapping ErrResyncFailed and ErrUnsynced and the store stays unsynced; a later Load tries
// again. Recovery (the caller's) must follow a re-synced Load, as after any
// restart.
func (f *FileStore) Load(ctx context.Context) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load checkpoint state: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock != nil && f.broken != nil {
		if err := f.resync(); err != nil {
			return nil, fmt.Errorf("checkpoint store %s: re-sync after a failed save (%v): %w", f.dir, f.broken, err)
		}
		f.broken = nil
	}
	if err := f.usable(); err != nil {
		return nil, err
	}
	s, err := readState(f.path)
	if err != nil {
		return nil, err
	}
	if err := f.checkIncarnation(s); err != nil {
		return nil, fmt.Errorf("load checkpoint state: %w", err)
	}
	if f.owner.Adopts(s.Owner, f.previous) {
		s.Owner = f.owner
	}
	if s.Owner != f.owner {
		return nil, &OwnerError{Dir: f.dir, Stored: s.Owner, Config: f.owner}
	}
	f.last = s
	return s.Clone(), nil
}

// Save validates s, refuses a state of another owner (*OwnerError) or one
// that moves the store backwards (*InvariantError), and durably replaces
// the stored state: when Save returns nil the new state survives a crash;
// after a crash during Save, Load returns the old or the new state, never a
// mix. If Save fails after the rename was attempted (rename or directory
// fsync failed) the durable state is unknown: the store refuses further use
// until Load re-synced it; that Save's error wraps ErrUnsynced. s is not
// retained.
func (f *FileStore) Save(ctx context.Context, s *State) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("save checkpoint state: %w", &InvariantError{Reason: "state is nil"})
	}
	if s.Owner != f.owner {
		return fmt.Errorf("save checkpoint state: %w", &OwnerError{Dir: f.dir, Stored: f.owner, Config: s.Owner})
	}
	if err := checkTransition(f.last, s); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	onDisk, err := readState(f.path)
	if err != nil {
		return fmt.Errorf("save checkpoint state: check the store's incarnation: %w", err)
	}
	if err := f.checkIncarnation(onDisk); err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	s = f.stamp(s)
	b, err := Encode(s)
	if err != nil {
		return fmt.Errorf("save checkpoint state: %w", err)
	}
	if renamed, err := writeAtomic(f.path, b, f.knobs.AfterRename); err != nil {
		if renamed {
			f.broken = fmt.Errorf("save checkpoint state to %s: %w", f.path, err)
			return fmt.Errorf("%w: %w", ErrUnsynced, f.broken)
		}
		return fmt.Errorf("save checkpoint state to %s: %w", f.path, err)
	}
	f.last = s
	return nil
}

// stamp returns a copy of s carrying this open's incarnation, in the state
// and in its decision when that is new (another id than the last one, or
// healed again): a decision keeps the incarnation that decided it.
func (f *FileStore) stamp(s *State) *State {
	s = s.Clone()
	s.Incarnation = f.incarnation
	if d := s.Decided; d != nil {
		if p := f.last.Decided; p == nil || p.ID != d.ID || p.Healed != d.Healed || p.TxnID != d.TxnID {
			d.Incarnation = f.incarnation
		}
	}
	return s
}

func (f *FileStore) usable() error {
	if f.lock == nil {
		return fmt.Errorf("checkpoint store %s: %w", f.dir, ErrClosed)
	}
	if f.fenced != nil {
		return fmt.Errorf("checkpoint store %s unusable: %w", f.dir, f.fenced)
	}
	if f.broken != nil {
		return fmt.Errorf("checkpoint store %s unusable after a failed save (Load re-syncs it; then recover): %w: %w",
			f.dir, ErrUnsynced, f.broken)
	}
	return nil
}

// resync makes the file's current content durable after a Save whose
// outcome is unknown: leftover temporary files are removed, the file is
// fsync'd, then the directory. Errors wrap ErrResyncFailed and ErrUnsynced.
func (f *FileStore) resync() error {
	if f.knobs.BeforeResync != nil {
		if err := f.knobs.BeforeResync(); err != nil {
			return resyncFailed(err)
		}
	}
	if err := removeTemps(f.dir); err != nil {
		return resyncFailed(err)
	}
	file, err := os.Open(f.path)
	if err != nil {
		return resyncFailed(err)
	}
	serr := file.Sync()
	cerr := file.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return resyncFailed(fmt.Errorf("fsync %s: %w", f.path, err))
	}
	if err := syncDir(f.dir); err != nil {
		return resyncFailed(err)
	}
	return nil
}

// resyncFailed wraps the cause of a failed re-sync.
func resyncFailed(err error) error {
	return fmt.Errorf("%w (%w): %w", ErrResyncFailed, ErrUnsynced, err)
}

// Close releases the lock. It is idempotent.
func (f *FileStore) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return nil
	}
	err := f.lock.Close()
	f.lock = nil
	if err != nil {
		return fmt.Errorf("close checkpoint store %s: %w", f.dir, err)
	}
	return nil
}
