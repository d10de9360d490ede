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
	// Labels are the labels of every committed txn, in commit order (a
	// store written before they were recorded has none): a refusal names
	// them, so the rows they loaded can be found in the table.
	Labels []string `json:"labels,omitempty"`
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
	// Filtered is Doris's NumberFilteredRows of the txn (rows dropped
	// under max_filter_ratio).
	Filtered int64 `json:"filtered_rows,omitempty"`
	// Heals counts the times this worker's pieces were loaded again
	// because Doris aborted the decided txn (precommit timeout); Healing is
	// the label of a heal announced and not yet recorded here, aborted
	// before the next one.
	Heals   int    `json:"heals,omitempty"`
	Healing string `json:"healing,omitempty"`
}

// decidedNothing reports whether no round of the load was ever decided
// or committed: nothing of it can be visible in the table.
func (s *State) decidedNothing() bool {
	return s.Decided == nil && s.Rounds == 0 && len(s.Labels) == 0 && s.Position == (Position{})
}

// done reports whether every file is committed.
func (s *State) done() bool { return s.Position.File >= len(s.Files) && s.Decided == nil }

// MismatchError refuses a store that holds another load: another table or
// other files (an input file changed since the load was planned). Nothing
// of the refused load was sent to Doris; a round a previous run decided is
// committed before files are compared (it reads no file), and Settled says
// so.
type MismatchError struct {
	Dir string
	// Have and Want describe the stored load and the requested one.
	Have, Want string
	Why        string
	// Rounds, Rows and Labels are what the stored load has committed:
	// rows in the table already. With any, loading the files again (a new
	// store, a removed one) would load those rows twice, and the error
	// advises only ways that do not.
	Rounds int
	Rows   int64
	Labels []string
	// Settled: this run committed the round a previous run decided before
	// refusing (its txns committed by id).
	Settled bool
	// Heal, when not empty, is the decided txn Doris aborted whose pieces
	// must be read again (the round is partly committed: Labels).
	Heal string
}

// maxLabelsShown bounds the labels an error lists.
const maxLabelsShown = 8

// Error names both loads and the safe way on.
func (e *MismatchError) Error() string {
	msg := fmt.Sprintf("store %s holds the load of %s; this load is of %s: %s", e.Dir, e.Have, e.Want, e.Why)
	if e.Rounds == 0 && len(e.Labels) == 0 {
		return msg + fmt.Sprintf(" (use another --store, or remove %s once that load is finished or abandoned)", e.Dir)
	}
	if e.Settled {
		msg += "; the round a previous run decided was committed first (its txns by id)"
	}
	if e.Heal != "" {
		msg += fmt.Sprintf("; Doris aborted decided txn %s, and loading its pieces again needs the files as planned", e.Heal)
	}
	shown := e.Labels
	more := ""
	if len(shown) > maxLabelsShown {
		shown, more = shown[:maxLabelsShown], fmt.Sprintf(" and %d more", len(e.Labels)-maxLabelsShown)
	}
	labels := "not recorded by this store"
	if len(shown) > 0 {
		labels = strings.Join(shown, " ") + more
	}
	return msg + fmt.Sprintf(". The rows of %d committed round(s) (%d rows; labels %s) are in the table already: "+
		"loading the files again (another --store, or this one removed) would load them twice. To finish the load, "+
		"restore the changed file as the store recorded it (same content and size; the modification time with "+
		"touch -d) and rerun with --store %s; to load the files anew, first delete those rows from the table, "+
		"then remove %s", e.Rounds, e.Rows, labels, e.Dir, e.Dir)
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
