package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// openStore opens a store in a new temp dir and closes it at cleanup.
func openStore(t *testing.T) (*FileStore, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	f, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f, dir
}

func TestOpenFileCreatesStoreRecordingOwner(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755&^umask(t) {
		t.Fatalf("dir %s: %v %v", dir, fi, err)
	}
	s, err := f.Load(t.Context())
	if err != nil || !reflect.DeepEqual(noIncarnation(s), NewState(testOwner)) {
		t.Fatalf("Load of a new store = %+v, %v", s, err)
	}
	s, err = ReadFile(dir)
	if err != nil || s.Owner != testOwner {
		t.Fatalf("owner not recorded on first open: %+v, %v", s, err)
	}
}

func umask(t *testing.T) os.FileMode {
	t.Helper()
	d := filepath.Join(t.TempDir(), "probe")
	if err := os.Mkdir(d, 0o777); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(d)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ fi.Mode().Perm()
}

func TestFileStoreRoundTripsEveryField(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	want := fullState(t)
	if err := f.Save(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, err := f.Load(t.Context())
	if err != nil || !reflect.DeepEqual(noIncarnation(got), want) {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f2, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if got, err := f2.Load(t.Context()); err != nil || !reflect.DeepEqual(noIncarnation(got), want) {
		t.Fatalf("Load after reopen = %+v, %v", got, err)
	}
	if got, err := ReadFile(dir); err != nil || !reflect.DeepEqual(noIncarnation(got), want) {
		t.Fatalf("ReadFile = %+v, %v", got, err)
	}
}

func TestOpenFileLockRefusesSecondOpen(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	_, err := OpenFile(dir, testOwner)
	var le *LockedError
	if !errors.As(err, &le) || le.Dir != dir || le.PID != os.Getpid() {
		t.Fatalf("second OpenFile = %v, want *LockedError for %s by pid %d", err, dir, os.Getpid())
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Fatalf("error %q does not name the dir and the pid", err)
	}
	// ReadFile does not take the lock.
	if _, err := ReadFile(dir); err != nil {
		t.Fatalf("ReadFile while locked: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f2, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatalf("OpenFile after Close: %v", err)
	}
	f2.Close()
}

func TestOpenFileRefusesOtherOwner(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	f.Close()
	job, table, writer, source := testOwner, testOwner, testOwner, testOwner
	job.Job = "payments-eos"
	table.DB, table.Table = "shop", "payments"
	writer.Writer = "w1"
	source.Source = "kafka:other"
	cases := []struct {
		owner Owner
		want  []string
	}{
		{job, []string{`job "orders-eos"`, `job "payments-eos"`, dir}},
		{table, []string{"table demo.orders", "table shop.payments"}},
		{writer, []string{`writer "0"`, `writer "w1"`}},
		{source, []string{`source "kafka:orders"`, `source "kafka:other"`}},
	}
	for _, c := range cases {
		_, err := OpenFile(dir, c.owner)
		var oe *OwnerError
		if !errors.As(err, &oe) || oe.Stored != testOwner || oe.Config != c.owner || oe.Dir != dir {
			t.Fatalf("OpenFile(%+v) = %v, want *OwnerError", c.owner, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
	}
	// The refusals released the lock and left the store as it was.
	f2, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatalf("OpenFile with the right owner: %v", err)
	}
	f2.Close()
}

func TestOpenFileRefusesInvalidOwner(t *testing.T) {
	t.Parallel()
	o := testOwner
	o.Job = "no spaces"
	dir := filepath.Join(t.TempDir(), "d")
	if _, err := OpenFile(dir, o); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("OpenFile(invalid owner) = %v", err)
	}
}

// A crash during Save leaves a temporary file and the old checkpoint file:
// the store opens on the old state and removes the leftover.
func TestCrashLeavesTempFileIgnoredAndCleaned(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	want := fullState(t)
	if err := f.Save(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	f.Close()
	newer := fullState(t)
	newer.NextID = 9
	b, err := Encode(newer)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, FileName+tmpInfix+"123456")
	if err := os.WriteFile(tmp, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	f2, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if got, err := f2.Load(t.Context()); err != nil || !reflect.DeepEqual(noIncarnation(got), want) {
		t.Fatalf("Load = %+v, %v; want the old state", got, err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("leftover temp file not removed: %v", err)
	}
}

func TestCorruptFileIsRefusedNotReset(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	if err := f.Save(t.Context(), fullState(t)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	path := filepath.Join(dir, FileName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"truncated": good[:len(good)/2],
		"empty":     {},
		"edited":    []byte(strings.Replace(string(good), `"txn_id": 1005`, `"txn_id": 1006`, 1)),
	} {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		for op, err := range map[string]error{
			"OpenFile": func() error { _, err := OpenFile(dir, testOwner); return err }(),
			"ReadFile": func() error { _, err := ReadFile(dir); return err }(),
		} {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != path {
				t.Fatalf("%s %s: %s = %v, want *CorruptError naming %s", name, path, op, err, path)
			}
			for _, w := range []string{path, "backup", "ledger"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %s error %q lacks %q", name, op, err, w)
				}
			}
		}
		if after, err := os.ReadFile(path); err != nil || string(after) != string(content) {
			t.Fatalf("%s: refused file was modified", name)
		}
	}
	// The refusals released the lock: restoring the file makes it usable.
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	f2, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatal(err)
	}
	f2.Close()
}

func TestSaveRefusals(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	ctx := t.Context()
	if err := f.Save(ctx, fullState(t)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	other := fullState(t)
	other.Owner.Writer = "w2"
	invalid := fullState(t)
	invalid.Decided.Healed = -1
	backNext := fullState(t)
	backNext.NextID, backNext.Announced = 6, backNext.Announced[:1]
	dropDecided := NewState(testOwner)
	dropDecided.NextID = 8
	backDecided := fullState(t)
	backDecided.Decide(decision(t, 4))
	backDecided.History = backDecided.History[:1]
	// Same decided id (a heal re-deciding it): a committed txn must stay
	// committed, with its txn id.
	uncommitTxn := fullState(t)
	uncommitTxn.Decided.Txn(customers).Committed, uncommitTxn.Decided.Txn(customers).CommittedAt = false, time.Time{}
	uncommitTxn.Decided.Sync(testOwner)
	replaceTxn := fullState(t)
	replaceTxn.Decided.Txn(customers).TxnID = 3005
	dropTxn := fullState(t)
	dropTxn.Decided.Txns = slices.DeleteFunc(dropTxn.Decided.Txns, func(t Txn) bool { return t.Table == customers })
	dropTxn.Decided.Sync(testOwner)
	for _, s := range []*State{uncommitTxn, replaceTxn, dropTxn} {
		if err := s.Validate(); err != nil {
			t.Fatalf("setup: %v", err) // refused by the transition check alone
		}
	}
	var oe *OwnerError
	var ie *InvariantError
	for name, c := range map[string]struct {
		s      *State
		target any
	}{
		"other owner":               {other, &oe},
		"invalid":                   {invalid, &ie},
		"next_id backwards":         {backNext, &ie},
		"decided dropped":           {dropDecided, &ie},
		"decided backwards":         {backDecided, &ie},
		"committed txn uncommitted": {uncommitTxn, &ie},
		"committed txn replaced":    {replaceTxn, &ie},
		"committed txn dropped":     {dropTxn, &ie},
		"nil":                       {nil, &ie},
	} {
		if err := f.Save(ctx, c.s); !errors.As(err, c.target) {
			t.Errorf("%s: Save = %v, want %T", name, err, c.target)
		}
	}
	if after, err := os.ReadFile(filepath.Join(dir, FileName)); err != nil || string(after) != string(before) {
		t.Fatal("a refused Save changed the file")
	}
	if got, err := f.Load(ctx); err != nil || !reflect.DeepEqual(noIncarnation(got), fullState(t)) {
		t.Fatalf("Load after refusals = %+v, %v", got, err)
	}
}

func TestClosedStore(t *testing.T) {
	t.Parallel()
	f, _ := openStore(t)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := f.Load(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Load after Close = %v", err)
	}
	if err := f.Save(t.Context(), fullState(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Save after Close = %v", err)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	f, _ := openStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.Load(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load = %v", err)
	}
	if err := f.Save(ctx, fullState(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save = %v", err)
	}
}

func TestReadFileMissing(t *testing.T) {
	t.Parallel()
	if _, err := ReadFile(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile(empty dir) = %v, want fs.ErrNotExist", err)
	}
}

func TestConcurrentSaveLoad(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	ctx := t.Context()
	s := NewState(testOwner)
	var states []*State
	for i := range 20 {
		if _, err := s.Announce(at(i)); err != nil {
			t.Fatal(err)
		}
		states = append(states, s.Clone())
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(states))
	for _, st := range states {
		wg.Go(func() {
			// Saves race: some are refused as moving backwards, none corrupt.
			var ie *InvariantError
			if err := f.Save(ctx, st); err != nil && !errors.As(err, &ie) {
				errs <- err
			}
		})
		wg.Go(func() {
			if _, err := f.Load(ctx); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			if _, err := ReadFile(dir); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(ctx, states[len(states)-1]); err != nil {
		t.Fatalf("saving the newest state: %v (stored next_id %d)", err, got.NextID)
	}
}
