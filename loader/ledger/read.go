package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FileName is the ledger file in its directory.
const FileName = "ledger.jsonl"

// Read parses a ledger. A last line without its newline is a torn tail
// (crash during Append): it is left out of entries and described by torn,
// which is nil when the ledger ends cleanly; it is not an error. Any other
// malformed line (not a JSON object, no event or time, an empty line) is a
// *LineError naming its 1-based line number. Unknown JSON fields are
// ignored, so newer ledgers stay readable.
func Read(r io.Reader) (entries []Entry, torn *TornTail, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var offset int64
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(b) > 0 {
				torn = &TornTail{Line: line, Offset: offset, Bytes: int64(len(b))}
			}
			return entries, torn, nil
		}
		if err != nil {
			return entries, nil, fmt.Errorf("read ledger line %d: %w", line, err)
		}
		e, perr := parseLine(b[:len(b)-1])
		if perr != nil {
			return entries, nil, &LineError{Line: line, Err: perr}
		}
		entries = append(entries, e)
		offset += int64(len(b))
	}
}

// ReadFile reads dir/ledger.jsonl without taking its lock (a concurrent
// Append in progress shows as a torn tail). Errors name the file; a
// missing ledger wraps fs.ErrNotExist.
func ReadFile(dir string) ([]Entry, *TornTail, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read ledger: %w", err)
	}
	defer f.Close()
	entries, torn, err := Read(f)
	if le, ok := errors.AsType[*LineError](err); ok {
		le.Path = path
		return entries, torn, le
	}
	if err != nil {
		return entries, torn, fmt.Errorf("read ledger %s: %w", path, err)
	}
	return entries, torn, nil
}

// parseLine decodes one complete line (without its newline).
func parseLine(b []byte) (Entry, error) {
	var e Entry
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return e, errors.New("empty line")
	}
	if t[0] != '{' {
		return e, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(t, &e); err != nil {
		return e, err
	}
	if e.Event == "" {
		return e, errors.New("no event")
	}
	if e.Time.IsZero() {
		return e, errors.New("no time")
	}
	return e, nil
}
