package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func at(sec int) time.Time { return time.Date(2026, 1, 2, 3, 4, sec, 5000, time.UTC) }

// fullEntry has every field set.
func fullEntry(cp uint64) Entry {
	return Entry{
		Time: at(int(cp)), Event: EventCommitted, Checkpoint: cp,
		Job: "orders-eos", DB: "demo", Table: "orders", Label: fmt.Sprintf("orders-eos:demo-orders:0:%d", cp),
		TxnID: 1000 + int64(cp), Ranges: json.RawMessage(`{"orders/0":[10,15]}`), State: "VISIBLE",
		RowsTotal: 5, RowsLoaded: 4, RowsFiltered: 1, RowsUnselected: 2, Bytes: 512,
		PrecommitAt: at(1), DecidedAt: at(2), CommittedAt: at(3), Attempts: 2, Note: "ok",
	}
}

func openLedger(t *testing.T, dir string) *Ledger {
	t.Helper()
	l, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestAppendReadRoundTripsEveryField(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	l := openLedger(t, dir)
	want := []Entry{fullEntry(1), {Time: at(9), Event: EventAborted, Checkpoint: 2, Label: "x"}}
	for _, e := range want {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	got, torn, err := ReadFile(dir)
	if err != nil || torn != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadFile = %+v, %v, %v", got, torn, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"time", "event", "checkpoint", "job", "db", "table", "label", "txn_id", "ranges",
		"state", "rows_total", "rows_loaded", "rows_filtered", "rows_unselected", "bytes", "precommit_at",
		"decided_at", "committed_at", "attempts", "note"} {
		if !bytes.Contains(b, []byte(`"`+key+`":`)) {
			t.Errorf("ledger lacks key %q", key)
		}
	}
	if n := bytes.Count(b, []byte("\n")); n != 2 {
		t.Fatalf("%d lines, want 2", n)
	}
}

func TestAppendRefusesAndFillsTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLedger(t, dir)
	if err := l.Append(Entry{Event: "done", Checkpoint: 3}); err == nil || !strings.Contains(err.Error(), "checkpoint 3") {
		t.Fatalf("Append(unknown event) = %v", err)
	}
	if err := l.Append(Entry{Event: EventDecided, Ranges: json.RawMessage("{")}); err == nil {
		t.Fatal("Append(bad ranges) succeeded")
	}
	before := time.Now()
	if err := l.Append(Entry{Event: EventDecided, Checkpoint: 1}); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadFile(dir)
	if err != nil || len(got) != 1 || got[0].Time.Before(before.Truncate(time.Second)) {
		t.Fatalf("ReadFile = %+v, %v", got, err)
	}
}

func TestTornTailToleratedOnReadRepairedOnOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLedger(t, dir)
	for cp := range uint64(3) {
		if err := l.Append(fullEntry(cp + 1)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	path := filepath.Join(dir, FileName)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, err := json.Marshal(fullEntry(4))
	if err != nil {
		t.Fatal(err)
	}
	// Every cut of the fourth line, including the whole line without its
	// newline, is a torn tail.
	for _, cut := range []int{1, len(line) / 2, len(line)} {
		if err := os.WriteFile(path, append(bytes.Clone(whole), line[:cut]...), 0o644); err != nil {
			t.Fatal(err)
		}
		got, torn, err := ReadFile(dir)
		want := &TornTail{Line: 4, Offset: int64(len(whole)), Bytes: int64(cut)}
		if err != nil || len(got) != 3 || !reflect.DeepEqual(torn, want) {
			t.Fatalf("cut %d: ReadFile = %d entries, %+v, %v", cut, len(got), torn, err)
		}
		l2, err := Open(dir)
		if err != nil {
			t.Fatalf("cut %d: Open: %v", cut, err)
		}
		if !reflect.DeepEqual(l2.Repaired(), want) {
			t.Fatalf("cut %d: Repaired = %v, want %v", cut, l2.Repaired(), want)
		}
		if err := l2.Append(fullEntry(5)); err != nil {
			t.Fatal(err)
		}
		l2.Close()
		got, torn, err = ReadFile(dir)
		if err != nil || torn != nil || len(got) != 4 || got[3].Checkpoint != 5 {
			t.Fatalf("cut %d: after repair: %d entries, %v, %v", cut, len(got), torn, err)
		}
	}
	// A torn first line.
	if err := os.WriteFile(path, []byte(`{"ti`), 0o644); err != nil {
		t.Fatal(err)
	}
	l3, err := Open(dir)
	if err != nil || l3.Repaired() == nil || l3.Repaired().Line != 1 {
		t.Fatalf("torn first line: Open = %v, %v", l3, err)
	}
	l3.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("torn first line not cut: %v %v", fi, err)
	}
}

func TestCorruptLineIsAnError(t *testing.T) {
	t.Parallel()
	e1, _ := json.Marshal(fullEntry(1))
	e2, _ := json.Marshal(fullEntry(2))
	cases := map[string]struct {
		content string
		line    int
	}{
		"garbage middle":  {string(e1) + "\n" + "not json\n" + string(e2) + "\n", 2},
		"empty middle":    {string(e1) + "\n\n" + string(e2) + "\n", 2},
		"null line":       {"null\n" + string(e2) + "\n", 1},
		"no event":        {`{"time":"2026-01-02T03:04:05Z"}` + "\n", 1},
		"no time":         {`{"event":"decided"}` + "\n", 1},
		"wrong type":      {string(e1) + "\n" + `{"time":"2026-01-02T03:04:05Z","event":"decided","checkpoint":"x"}` + "\n", 2},
		"corrupt last":    {string(e1) + "\n" + string(e2[:10]) + "\n", 2},
		"zeros then line": {string(e1) + "\n" + "\x00\x00\x00\n", 2},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := ReadFile(dir)
			var le *LineError
			if !errors.As(err, &le) || le.Line != c.line || le.Path != path {
				t.Fatalf("ReadFile = %v, want *LineError at %s line %d", err, path, c.line)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("line %d", c.line)) {
				t.Fatalf("error %q does not name line %d", err, c.line)
			}
			// Open checks only the last complete line.
			l, err := Open(dir)
			if last := strings.Count(c.content, "\n"); c.line == last {
				if !errors.As(err, &le) || le.Line != c.line {
					t.Fatalf("Open = %v, want *LineError at line %d", err, c.line)
				}
			} else if err == nil {
				l.Close()
			}
			if after, _ := os.ReadFile(path); string(after) != c.content {
				t.Fatal("a corrupt ledger was modified")
			}
		})
	}
}

func TestOpenLocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLedger(t, dir)
	_, err := Open(dir)
	var le *LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second Open = %v, want *LockedError naming %s", err, dir)
	}
	l.Close()
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.Append(fullEntry(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close = %v", err)
	}
	l2, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	l2.Close()
}

func TestReadFileMissing(t *testing.T) {
	t.Parallel()
	if _, _, err := ReadFile(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile = %v, want fs.ErrNotExist", err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLedger(t, dir)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := l.Append(fullEntry(uint64(i + 1))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, torn, err := ReadFile(dir)
	if err != nil || torn != nil || len(got) != n {
		t.Fatalf("ReadFile = %d entries, %v, %v", len(got), torn, err)
	}
	seen := map[uint64]bool{}
	for _, e := range got {
		if !reflect.DeepEqual(e, fullEntry(e.Checkpoint)) || seen[e.Checkpoint] {
			t.Fatalf("entry %+v mangled or duplicated", e)
		}
		seen[e.Checkpoint] = true
	}
}

func TestReadIgnoresUnknownFields(t *testing.T) {
	t.Parallel()
	got, torn, err := Read(strings.NewReader(`{"time":"2026-01-02T03:04:05Z","event":"decided","checkpoint":7,"future":true}` + "\n"))
	if err != nil || torn != nil || len(got) != 1 || got[0].Checkpoint != 7 {
		t.Fatalf("Read = %+v, %v, %v", got, torn, err)
	}
}
