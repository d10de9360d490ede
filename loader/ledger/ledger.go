package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Ledger appends entries to dir/ledger.jsonl. Its methods are safe for
// concurrent use; appends are serialised. Call Close when done.
type Ledger struct {
	path     string
	repaired *TornTail

	mu     sync.Mutex
	f      *os.File // nil once closed
	size   int64    // bytes known to be whole lines
	broken error    // set when the file's tail is unknown
}

// Open opens (creating dir 0o755 and the file if missing) the ledger in dir
// for appending. It takes an exclusive non-blocking lock on the file
// (*LockedError if another Ledger holds it), cuts off a torn last line left
// by a crash (see Repaired), and refuses a ledger whose last complete line
// is malformed (*LineError). Only the tail is read, so Open is fast on a
// long ledger; ReadFile checks every line.
func Open(dir string) (*Ledger, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	l, err := open(f, dir)
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func open(f *os.File, dir string) (*Ledger, error) {
	if err := lockFile(f); err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	if fi.Size() == 0 {
		// Make the file's creation durable before the first entry counts.
		if err := syncDir(dir); err != nil {
			return nil, err
		}
	}
	size, torn, err := repair(f, fi.Size())
	if err != nil {
		return nil, err
	}
	return &Ledger{path: f.Name(), repaired: torn, f: f, size: size}, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open ledger directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync ledger directory %s: %w", dir, err)
	}
	return nil
}

// Path returns the ledger file's path.
func (l *Ledger) Path() string { return l.path }

// Repaired returns the torn last line Open cut off, nil if the ledger ended
// cleanly. Callers should log it.
func (l *Ledger) Repaired() *TornTail { return l.repaired }

// Append writes e as one line and fsyncs it; when it returns nil the entry
// is durable. A zero e.Time is set to the current time. It refuses an
// unknown Event or Ranges that are not valid JSON. If the write fails the
// partial line is cut off; if that or the fsync fails, the ledger's tail is
// unknown and every later Append returns an error (reopen to repair).
func (l *Ledger) Append(e Entry) error {
	if !ValidEvent(e.Event) {
		return fmt.Errorf("append to ledger: checkpoint %d: unknown event %q", e.Checkpoint, e.Event)
	}
	if len(e.Ranges) > 0 && !json.Valid(e.Ranges) {
		return fmt.Errorf("append to ledger: checkpoint %d: ranges are not valid JSON", e.Checkpoint)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("append to ledger: checkpoint %d: %w", e.Checkpoint, err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("append to ledger %s: %w", l.path, ErrClosed)
	}
	if l.broken != nil {
		return fmt.Errorf("append to ledger %s: unusable after a failed append (reopen it): %w", l.path, l.broken)
	}
	if _, err := l.f.Write(b); err != nil {
		err = fmt.Errorf("append to ledger %s: checkpoint %d: %w", l.path, e.Checkpoint, err)
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = errors.Join(err, terr)
		}
		return err
	}
	if err := l.f.Sync(); err != nil {
		l.broken = fmt.Errorf("fsync ledger %s: %w", l.path, err)
		return l.broken
	}
	l.size += int64(len(b))
	return nil
}

// Close closes the file and releases the lock. It is idempotent.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("close ledger %s: %w", l.path, err)
	}
	return nil
}
