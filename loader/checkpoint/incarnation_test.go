package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFileStoreIncarnationChangesAtEachOpen(t *testing.T) {
	t.Parallel()
	f, dir := openStore(t)
	inc := f.Incarnation()
	if len(inc) != 32 || !validIncarnation(inc) {
		t.Fatalf("incarnation %q, want 32 lower-case hex digits", inc)
	}
	if s, err := ReadFile(dir); err != nil || s.Incarnation != inc {
		t.Fatalf("file holds incarnation %q (%v), want %q written at open", s.Incarnation, err, inc)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f2, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if f2.Incarnation() == inc {
		t.Fatal("a second open kept the incarnation")
	}
	if s, err := ReadFile(dir); err != nil || s.Incarnation != f2.Incarnation() {
		t.Fatalf("file holds incarnation %q (%v) after the second open, want %q", s.Incarnation, err, f2.Incarnation())
	}
}

// Every decision a FileStore writes carries its incarnation; a decision
// saved again (marked committed) by a later open keeps the one that
// decided it.
func TestFileStoreStampsDecisions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f, dir := openStore(t)
	s := NewState(testOwner)
	s.NextID = 2
	d := decision(t, 1)
	s.Decided = &d
	if err := f.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	first := f.Incarnation()
	got, err := f.Load(ctx)
	if err != nil || got.Decided.Incarnation != first || got.Incarnation != first {
		t.Fatalf("decision incarnation %q, state %q (%v), want %q", got.Decided.Incarnation, got.Incarnation, err, first)
	}
	f.Close()
	f2, err := OpenFile(dir, testOwner)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	got, err = f2.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got.Decided.MarkCommitted(testOwner, testOwner.TableName(), at(20))
	if err := f2.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got, err = f2.Load(ctx); err != nil || got.Decided.Incarnation != first || got.Incarnation != f2.Incarnation() {
		t.Fatalf("after marking committed: decision %q state %q (%v), want decision %q state %q",
			got.Decided.Incarnation, got.Incarnation, err, first, f2.Incarnation())
	}
	got.NextID = 3
	got.Decide(decision(t, 2))
	if err := f2.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	got, err = f2.Load(ctx)
	if err != nil || got.Decided.Incarnation != f2.Incarnation() || got.History[0].Incarnation != first {
		t.Fatalf("new decision %q, history %q (%v), want %q and %q", got.Decided.Incarnation,
			got.History[0].Incarnation, err, f2.Incarnation(), first)
	}
}

// A store directory restored from an older copy, or replaced, under a
// running process: its file no longer holds the incarnation written at
// open, and the store refuses every Save and Load (fenced, for good)
// without writing.
func TestFileStoreRefusesSaveAfterStoreReplaced(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, how := range []string{"restored copy", "replaced directory", "copy without incarnation"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			f1, dir := openStore(t)
			s := NewState(testOwner)
			if _, err := s.Announce(at(1)); err != nil {
				t.Fatal(err)
			}
			if err := f1.Save(ctx, s); err != nil {
				t.Fatal(err)
			}
			backup, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			f1.Close()
			f, err := OpenFile(dir, testOwner)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, err := f.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantOnDisk := f1.Incarnation()
			switch how {
			case "restored copy":
				if err := os.WriteFile(filepath.Join(dir, FileName), backup, 0o644); err != nil {
					t.Fatal(err)
				}
			case "replaced directory":
				if err := os.Rename(dir, dir+".old"); err != nil {
					t.Fatal(err)
				}
				f3, err := OpenFile(dir, testOwner) // the old LOCK went with the old directory
				if err != nil {
					t.Fatal(err)
				}
				defer f3.Close()
				wantOnDisk = f3.Incarnation()
			case "copy without incarnation":
				old := NewState(testOwner)
				b, err := Encode(old)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, FileName), b, 0o644); err != nil {
					t.Fatal(err)
				}
				wantOnDisk = ""
			}
			before, err := os.ReadFile(filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Announce(at(2)); err != nil {
				t.Fatal(err)
			}
			err = f.Save(ctx, st)
			var ie *IncarnationError
			if !errors.As(err, &ie) || !errors.Is(err, ErrFenced) {
				t.Fatalf("Save: %v, want *IncarnationError wrapping ErrFenced", err)
			}
			if ie.Opened != f.Incarnation() || ie.OnDisk != wantOnDisk || ie.Dir != dir {
				t.Fatalf("incarnation error %+v, want opened %s on disk %q", ie, f.Incarnation(), wantOnDisk)
			}
			if after, err := os.ReadFile(filepath.Join(dir, FileName)); err != nil || string(after) != string(before) {
				t.Fatal("the refused Save changed the file")
			}
			if _, err := f.Load(ctx); !errors.Is(err, ErrFenced) {
				t.Fatalf("Load after the refusal: %v, want ErrFenced", err)
			}
			if err := f.Save(ctx, st); !errors.Is(err, ErrFenced) {
				t.Fatalf("Save again: %v, want ErrFenced (fenced for good)", err)
			}
		})
	}
}

func TestIncarnationValidated(t *testing.T) {
	t.Parallel()
	s := NewState(testOwner)
	s.Incarnation = "Not-Hex"
	var ie *InvariantError
	if _, err := Encode(s); !errors.As(err, &ie) {
		t.Fatalf("Encode with a bad state incarnation: %v, want *InvariantError", err)
	}
	s = NewState(testOwner)
	s.NextID = 2
	d := decision(t, 1)
	d.Incarnation = "zz"
	s.Decided = &d
	if _, err := Encode(s); !errors.As(err, &ie) {
		t.Fatalf("Encode with a bad decision incarnation: %v, want *InvariantError", err)
	}
}
