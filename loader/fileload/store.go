package fileload

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// stateVersion is the version of the store's state.json.
const stateVersion = 1

// State is what the store holds: the load's identity, how far it is
// committed, and the one round in flight (announced or decided).
type State struct {
	Version int `json:"version"`
	// DB and Table are the target; Files the input as planned.
	DB    string `json:"db"`
	Table string `json:"table"`
	Files []File `json:"files"`
	// Prefix is the label prefix, derived from the load id.
	Prefix string `json:"prefix"`
	// Position is where the committed part of the load ends: every row
	// before it is committed (VISIBLE), none after it is.
	Position Position `json:"position"`
	// Attempt is the last attempt number announced (the labels'
	// checkpoint field); each attempt is one round's try.
	Attempt uint64 `json:"attempt"`
	// Rounds counts the committed rounds; Rows and Bytes their totals.
	Rounds int   `json:"rounds"`
	Rows   int64 `json:"rows"`
	Bytes  int64 `json:"bytes"`
	// Announced are the labels of attempt Attempt when it is announced and
	// not decided: Doris may hold them PREPARE or PRECOMMITTED; they are
	// aborted before anything else begins.
	Announced []string `json:"announced,omitempty"`
	// Decided is the decision of the round in flight: its txns are
	// committed, whatever happens, before anything else begins.
	Decided *Decision `json:"decided,omitempty"`
}

// Decision is the one durable record that makes a round's txns
// committable: all of them, and the file positions they cover.
type Decision struct {
	Attempt uint64   `json:"attempt"`
	Start   Position `json:"start"`
	End     Position `json:"end"`
	Txns    []Txn    `json:"txns"`
}

// Txn is one worker's precommitted txn.
type Txn struct {
	Worker int     `json:"worker"`
	Label  string  `json:"label"`
	TxnID  int64   `json:"txn_id"`
	Rows   int64   `json:"rows"`
	Bytes  int64   `json:"bytes"`
	Pieces []Piece `json:"pieces"`
	// Heals counts the times this worker's pieces were loaded again
	// because Doris aborted the decided txn (precommit timeout); Healing is
	// the label of a heal announced and not yet recorded here, aborted
	// before the next one.
	Heals   int    `json:"heals,omitempty"`
	Healing string `json:"healing,omitempty"`
}

// done reports whether every file is committed.
func (s *State) done() bool { return s.Position.File >= len(s.Files) && s.Decided == nil }

// MismatchError refuses a store that holds another load: another table or
// other files. Nothing was sent to Doris.
type MismatchError struct {
	Dir string
	// Have and Want describe the stored load and the requested one.
	Have, Want string
	Why        string
}

// Error names both loads.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("store %s holds the load of %s; this load is of %s: %s (use another --store, or remove %s "+
		"once that load is finished or abandoned)", e.Dir, e.Have, e.Want, e.Why, e.Dir)
}

// LockedError: another process holds the store.
type LockedError struct {
	Dir string
	PID int
}

// Error names the directory and the holder.
func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("store %s is in use by %s (one load per store at a time)", e.Dir, who)
}

// Store is a directory holding state.json, replaced atomically (temporary
// file, fsync, rename, directory fsync) on every Save, and a LOCK file
// flock'ed while it is open, so one process at a time runs a load.
type Store struct {
	dir  string
	lock *os.File
}

const stateName = "state.json"

// OpenStore creates dir if needed and locks it.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open load store: %w", err)
	}
	l, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	return &Store{dir: dir, lock: l}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Load returns the state, or nil when the store is new.
func (s *Store) Load() (*State, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, stateName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read load store: %w", err)
	}
	var st State
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("read load store %s: %w", filepath.Join(s.dir, stateName), err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("read load store %s: version %d, this doris-sink reads %d", s.dir, st.Version, stateVersion)
	}
	return &st, nil
}

// Save writes st durably: when it returns nil, st survives a crash.
func (s *Store) Save(st *State) error {
	st.Version = stateVersion
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("save load store: %w", err)
	}
	if err := writeAtomic(filepath.Join(s.dir, stateName), append(b, '\n')); err != nil {
		return fmt.Errorf("save load store %s: %w", s.dir, err)
	}
	return nil
}

// Close releases the lock.
func (s *Store) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// writeAtomic replaces path with b durably.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
